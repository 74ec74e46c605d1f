package client_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/client"
)

// auditPages serves the export contract (the route is being built beside the
// client): three answers of two rows, each CSV answer with its header line,
// linked by rel="next".
func auditPages(t *testing.T, nextHost string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != client.AuditExportPath || r.Header.Get("X-API-Key") != "svc_test" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page == 0 {
			page = 1
		}
		if page < 3 {
			host := nextHost
			if host == "" {
				host = "http://" + r.Host
			}
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?format=%s&page=%d>; rel="next"`, host, client.AuditExportPath, r.URL.Query().Get("format"), page+1))
		}
		if r.URL.Query().Get("format") == "csv" {
			fmt.Fprint(w, "id,action\n")
		}
		for i := range 2 {
			fmt.Fprintf(w, "%d-%d,login\n", page, i)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestExportAuditLogsFollowsNextLinks(t *testing.T) {
	srv := auditPages(t, "")
	g, err := client.New(srv.URL, client.WithAPIKey("svc_test"), client.WithDoer(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var progress []string
	err = g.ExportAuditLogs(context.Background(), "csv", nil, &out, func(pages, rows int) {
		progress = append(progress, fmt.Sprintf("%d/%d", pages, rows))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "id,action\n1-0,login\n1-1,login\n2-0,login\n2-1,login\n3-0,login\n3-1,login\n"
	if out.String() != want {
		t.Fatalf("export:\n%s\nwant:\n%s", out.String(), want)
	}
	if strings.Join(progress, " ") != "1/2 2/4 3/6" {
		t.Fatalf("progress %v", progress)
	}
}

func TestExportAuditLogsRefusesALinkToAnotherHost(t *testing.T) {
	srv := auditPages(t, "http://attacker.example")
	g, err := client.New(srv.URL, client.WithAPIKey("svc_test"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := g.ExportAuditLogs(context.Background(), "ndjson", nil, &out, nil); err == nil || !strings.Contains(err.Error(), "another host") {
		t.Fatalf("err %v, want the other host refused", err)
	}
}
