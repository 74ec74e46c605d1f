// Package health answers GET /api/v1/health: the build version and whether the
// table and queues answer. It needs no credentials and reveals no configuration.
package health

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Check probes one dependency.
type Check func(ctx context.Context) error

// Handler serves the health route.
type Handler struct {
	Version string
	Checks  map[string]Check
}

// Routes registers GET /api/v1/health.
func (h *Handler) Routes(rt *httpapi.Router) {
	// Public by design: load balancers and the quick start call it without credentials.
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/health", Access: httpapi.Public, Handle: h.get})
	// GET / and GET /api/v1 are where a newcomer tries first: they name the
	// reference page and the document instead of answering a bare 404.
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/{$}", Access: httpapi.Public, Handle: index})
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1", Access: httpapi.Public, Handle: index})
}

// Index is the answer of GET / and GET /api/v1.
var Index = map[string]string{
	"name":    "Gale API",
	"docs":    "/api/v1/docs",
	"openapi": "/api/v1/openapi.json",
	"health":  "/api/v1/health",
	"message": "The API lives under /api/v1; its reference is at /api/v1/docs and the OpenAPI document at /api/v1/openapi.json.",
}

func index(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, Index)
	return nil
}

// noQuery refuses a query on a route that takes none, naming one parameter
// it was sent.
func noQuery(r *http.Request) error {
	for name := range r.URL.Query() {
		return fault.Invalid(name, "unknown query parameter")
	}
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	checks := map[string]string{}
	healthy := true
	for name, c := range h.Checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := "ok"
			if err := c(ctx); err != nil {
				res = "unavailable"
			}
			mu.Lock()
			checks[name] = res
			healthy = healthy && res == "ok"
			mu.Unlock()
		}()
	}
	wg.Wait()
	status, code := "ok", http.StatusOK
	if !healthy {
		status, code = "degraded", http.StatusServiceUnavailable
	}
	httpapi.WriteJSON(w, code, map[string]any{"status": status, "version": h.Version, "checks": checks})
	return nil
}
