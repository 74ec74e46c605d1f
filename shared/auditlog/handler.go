package auditlog

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves the audit log routes. What each reads and writes after
// authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go):
//
//	route                   reads and writes
//	GET /audit-logs         one query (at most limit rows read); the organization of an orgId (tenant.Reach)
//	GET /audit-logs/export  queries of up to 1 MB each until 5,000 rows, the log's end or ExportReads queries; the organization as above; the audit.export row
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/audit-logs", Access: httpapi.User, Handle: h.list},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/audit-logs/export", Access: httpapi.User, MFA: true, Handle: h.export})
}

func query(r *http.Request) Query {
	v := r.URL.Query()
	return Query{OrgID: v.Get("orgId"), PartnerID: v.Get("partnerId"), ActorID: v.Get("actorId"), Action: v.Get("action"),
		ResourceType: v.Get("resourceType"), ResourceID: v.Get("resourceId"), From: v.Get("from"), To: v.Get("to")}
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, DefaultLimit, MaxLimit)
	if err != nil {
		return err
	}
	q := query(r)
	q.Limit = page.Limit
	if q.Cursor, err = httpapi.ParseCursor(r); err != nil {
		return err
	}
	pg, err := h.Svc.List(r.Context(), q)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": pg.Entries,
		"pagination": map[string]any{"limit": pg.Limit, "nextCursor": emptyNil(pg.Next)}})
	return nil
}

func emptyNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (h *Handler) export(w http.ResponseWriter, r *http.Request) error {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "ndjson"
	}
	q := query(r)
	var err error
	if q.Cursor, err = httpapi.ParseCursor(r); err != nil {
		return err
	}
	pg, err := h.Svc.Export(r.Context(), q, format)
	if err != nil {
		return err
	}
	if pg.Next != "" {
		next := *r.URL
		v := next.Query()
		v.Set("cursor", pg.Next)
		next.RawQuery = v.Encode()
		w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", (&url.URL{Path: next.Path, RawQuery: next.RawQuery}).String()))
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		return writeCSV(w, pg.Entries)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, e := range pg.Entries {
		if err := enc.Encode(e); err != nil {
			return nil // the client went away; the status is sent
		}
	}
	return nil
}

// csvHeader is the export's CSV columns, in the order of the JSON entry.
var csvHeader = []string{"id", "timestamp", "actorId", "actorEmail", "actorType", "action", "resourceType", "resourceId",
	"resourceName", "orgId", "partnerId", "details", "ip", "userAgent", "requestId"}

// writeCSV writes a header row and one row per entry (encoding/csv quotes
// fields holding commas, quotes or line breaks; details are their JSON).
func writeCSV(w http.ResponseWriter, entries []Entry) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	for _, e := range entries {
		details := ""
		if len(e.Details) > 0 {
			b, _ := json.Marshal(e.Details)
			details = string(b)
		}
		_ = cw.Write([]string{e.ID, e.Timestamp, e.Actor.ID, e.Actor.Email, e.Actor.Type, e.Action, e.ResourceType, e.ResourceID,
			neutral(e.ResourceName), e.OrgID, e.PartnerID, details, e.IP, neutral(e.UserAgent), e.RequestID})
	}
	cw.Flush()
	return nil
}

// neutral keeps a spreadsheet from reading a user-chosen text as a formula.
func neutral(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
