// Command local is Gale's local runtime, the stand-in for what the CDK app wires in
// AWS: it reads the local settings file, starts moto_server unless
// AWS_ENDPOINT_URL names a running emulator (loading the state it saved when
// last stopped: localdata.go), provisions the table and queues (idempotent),
// seeds demo data when the table has none, serves the whole API on
// loopback by invoking each function's Lambda handler in-process, feeds the queues
// to the workers and fires the sweeper on the declared schedules.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gale-rmm/gale/shared/app/agentchannelgroup"
	"github.com/gale-rmm/gale/shared/app/mailergroup"
	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"

	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/channel/bridge"
	"github.com/gale-rmm/gale/shared/emulator"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/routes"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gale local:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := httpapi.NewLogger(os.Stderr, slog.LevelInfo)
	slog.SetDefault(log)

	dir, err := localDir()
	if err != nil {
		return err
	}
	settings, err := loadSettings(filepath.Join(dir, settingsFile))
	if err != nil {
		return fmt.Errorf("local settings: %w", err)
	}
	if len(settings) > 0 {
		log.Info("local settings read", "file", filepath.Join(dir, settingsFile), "keys", strings.Join(settings, ","))
	}
	setDefault("APP_ENV", "development")
	setDefault("PAM_ACTUATOR_ENABLED", "true")
	setDefault("SYSTEM_ADMIN_EMAIL", "admin@gale.local")
	setDefault("SYSTEM_ADMIN_PASSWORD", "Gale-Demo-Admin-2026!")
	setDefault("TABLE_NAME", "gale")
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	setDefault("APP_URL", "http://127.0.0.1:"+port)
	// The agent channel: agents connect to the bridge, and the functions post
	// to it through the Management API's wire on the same loopback listener.
	setDefault("CHANNEL_URL", "ws://127.0.0.1:"+port+bridge.Path)
	setDefault("CHANNEL_ENDPOINT", "http://127.0.0.1:"+port)

	moto, err := emulator.EnsureSaving(ctx, filepath.Join(dir, stateFile))
	if err != nil {
		return err
	}
	defer func() {
		if err := moto.Shutdown(); err != nil {
			log.Error("local data not saved", "err", err)
		}
	}()
	if moto != nil {
		log.Info("moto_server started", "url", moto.URL, "pid", moto.PID(), "state", moto.State)
	} else {
		log.Info("using the emulator at AWS_ENDPOINT_URL: it keeps (or loses) the data itself")
	}

	cfg, res, err := emulator.Configure(ctx)
	if err != nil {
		return err
	}
	d, err := app.NewDeps(ctx, cfg, nil)
	if err != nil {
		return err
	}

	n := mailergroup.Notifier(d)
	n.Echo = os.Stdout
	if err := n.VerifySender(ctx); err != nil {
		return err
	}

	handlers := map[string]http.Handler{}
	for name, build := range groups.Builders() {
		h, err := build(d)
		if err != nil {
			return fmt.Errorf("build %s: %w", name, err)
		}
		handlers[name] = h
	}
	seeded, err := groups.Seed(ctx, d)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}

	worker, err := webhookworkergroup.Worker(d)
	if err != nil {
		return err
	}
	consumers := map[string]sqsHandler{"webhook-worker": worker.Handle, "mailer": mailergroup.Worker(d, n).Handle}
	for _, q := range routes.Queues {
		handle, ok := consumers[q.Consumer]
		if !ok {
			return fmt.Errorf("no local consumer for queue %s (%s)", q.Name, q.Consumer)
		}
		// As many batches at once as the event source mapping runs in AWS.
		for range max(q.MaxConcurrency, 1) {
			go poll(ctx, d.SQS, q, res.Queues[q.Name], handle, log)
		}
	}
	schedule(ctx, sweepergroup.Sweeper(d), log)

	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	ch := agentchannelgroup.Handler(d)
	channel := bridge.New(ch.Authorize, ch.Handle)
	mux := http.NewServeMux()
	mux.Handle(bridge.Path, channel)
	mux.Handle("/@connections/", channel)
	mux.Handle("/", newGateway(handlers))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("\nGale is serving on http://127.0.0.1:%s/api/v1 (health: http://127.0.0.1:%s/api/v1/health)\n", port, port)
	fmt.Printf("Agent channel: %s\n", d.Cfg.ChannelURL)
	fmt.Print(seeded.Banner())
	fmt.Println("Press Ctrl-C to stop.")
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func setDefault(k, v string) {
	if os.Getenv(k) == "" {
		os.Setenv(k, v)
	}
}
