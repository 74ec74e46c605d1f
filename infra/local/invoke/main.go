// Command invoke runs one function's real handler with a recorded event, the way
// Lambda would, and prints the function's response:
//
//	go run ./infra/local/invoke -function health -event events/health/get-health.200.json
//
// It starts moto_server (or uses AWS_ENDPOINT_URL), provisions the table and queues
// and bootstraps the system roles first, so the handler finds what it needs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/gale-rmm/gale/shared/app/signingroup"
	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"

	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/emulator"
	"github.com/gale-rmm/gale/shared/sweep"
)

func main() {
	fn := flag.String("function", "", "function name (a directory under functions/)")
	file := flag.String("event", "", "event JSON file")
	flag.Parse()
	if err := run(*fn, *file); err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
}

func run(fn, file string) error {
	if fn == "" || file == "" {
		return fmt.Errorf("both -function and -event are required")
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	ctx := context.Background()
	moto, err := emulator.Ensure(ctx)
	if err != nil {
		return err
	}
	defer moto.Stop()
	cfg, _, err := emulator.Configure(ctx)
	if err != nil {
		return err
	}
	d, err := app.NewDeps(ctx, cfg, nil)
	if err != nil {
		return err
	}
	if err := signingroup.Bootstrap(ctx, d); err != nil {
		return err
	}
	var out any
	switch fn {
	case "webhook-worker":
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return err
		}
		w, werr := webhookworkergroup.Worker(d)
		if werr != nil {
			return werr
		}
		out, err = w.Handle(ctx, ev)
	case "sweeper":
		var ev sweep.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return err
		}
		err = sweepergroup.Sweeper(d).Handle(ctx, ev)
		out = map[string]string{"job": ev.Job, "result": "done"}
	default:
		build, ok := groups.Builders()[fn]
		if !ok {
			return fmt.Errorf("no function %q", fn)
		}
		h, berr := build(d)
		if berr != nil {
			return berr
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			return err
		}
		out, err = httpadapter.NewV2(h).ProxyWithContext(ctx, ev)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
