package sso

import (
	"errors"
	"net/http"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/signin"
)

// Handler serves /api/v1/sso. Management routes need a bearer JWT (reads
// organizations:read; writes organizations:write + MFA); login, callback,
// exchange and check are public.
//
// What each route reads and writes besides authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go):
//
//	route                                  what
//	GET    /sso/presets                    none: the presets are code
//	GET    /sso/providers                  organization GetItem (orgId of a partner or system caller); list index Query, BatchGetItem (+ Select COUNT when the page stops short)
//	POST   /sso/providers                  organization GetItem; transaction (provider, pair guard, audit)
//	GET    /sso/providers/:id              provider GetItem (organization callers) or GSI1 Query
//	PATCH  /sso/providers/:id              read; transaction (CAS on version, guards, active row, audit)
//	DELETE /sso/providers/:id              read; identities Query; a transaction per 100; transaction
//	POST   /sso/providers/:id/status       read; transaction (CAS, active row, audit)
//	POST   /sso/providers/:id/test         read (+ discovery over HTTPS)
//	GET    /sso/login/:orgId               rate limit UpdateItem; active row (organization, then partner); provider; login session PutItem (+ discovery)
//	GET    /sso/callback                   rate limit; session Take; provider; identity; account reads; role (ceiling); transaction
//	POST   /sso/exchange                   rate limit; code Take; account; memberships; sign-in transaction
//	GET    /sso/check/:orgId               active row (organization, then partner)
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/presets", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.presets)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/providers", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/providers", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/providers/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/sso/providers/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.patch)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/sso/providers/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.delete)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/providers/{id}/status", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.status)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/providers/{id}/test", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.test)},
		// Public: the browser's sign-in before any session exists.
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/login/{orgId}", Access: httpapi.Public, NoAuthz: true, Handle: h.login},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/callback", Access: httpapi.Public, NoAuthz: true, Handle: h.callback},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/exchange", Access: httpapi.Public, NoAuthz: true, Handle: h.exchange},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/check/{orgId}", Access: httpapi.Public, NoAuthz: true, Handle: httpapi.Call(http.StatusOK, h.check)},
	)
}

// noQuery refuses query parameters on routes that take none.
func noQuery(r *http.Request, allowed ...string) error {
	f := fault.Fields{}
	for k := range r.URL.Query() {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			f.Add(k, "is not a parameter of this route")
		}
	}
	return f.Err()
}

func (h *Handler) presets(r *http.Request) (httpapi.List[Preset], error) {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return httpapi.List[Preset]{}, err
	}
	ps, err := h.Svc.ListPresets(r.Context())
	return httpapi.NewList(ps, page), err
}

func (h *Handler) list(r *http.Request) (httpapi.List[Provider], error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return httpapi.List[Provider]{}, err
	}
	q := r.URL.Query()
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: q.Get("orgId"), PartnerID: q.Get("partnerId"),
		Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return httpapi.List[Provider]{}, err
	}
	return pg.Envelope(), nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Provider, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Provider, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) patch(r *http.Request, in PatchInput) (*Provider, error) {
	return h.Svc.Update(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) delete(r *http.Request) (map[string]bool, error) {
	return map[string]bool{"success": true}, h.Svc.Delete(r.Context(), r.PathValue("id"))
}

func (h *Handler) status(r *http.Request, in StatusInput) (*Provider, error) {
	return h.Svc.SetStatus(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) test(r *http.Request) (*TestResult, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Test(r.Context(), r.PathValue("id"))
}

// stateCookie binds a login to the browser that started it. __Host- pins it
// to this host, Secure and Path=/; SameSite=Lax lets it ride the provider's
// top-level redirect back to the callback.
func stateCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: value, Path: "/", MaxAge: maxAge, Secure: true, HttpOnly: true,
		SameSite: http.SameSiteLaxMode}
}

func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	to, state, err := h.Svc.Login(r.Context(), r.PathValue("orgId"), httpapi.SourceIP(r))
	var ce *CallbackError
	switch {
	case errors.As(err, &ce):
		redirect(w, h.Svc.ErrorRedirect(ce.Code))
		return nil
	case err != nil:
		return err
	}
	http.SetCookie(w, stateCookie(state, int(LoginTTL.Seconds())))
	redirect(w, to)
	return nil
}

func (h *Handler) callback(w http.ResponseWriter, r *http.Request) error {
	in, err := CheckCallback(r.URL.Query())
	if err != nil {
		return err
	}
	if c, err := r.Cookie(CookieName); err == nil {
		in.CookieState = c.Value
	}
	in.SourceIP = httpapi.SourceIP(r)
	to, err := h.Svc.Callback(r.Context(), in)
	if err != nil {
		return err
	}
	http.SetCookie(w, stateCookie("", -1))
	redirect(w, to)
	return nil
}

// ExchangeInput is the exchange body.
type ExchangeInput struct {
	Code *string `json:"code"`
}

func (h *Handler) exchange(w http.ResponseWriter, r *http.Request) error {
	var in ExchangeInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	f := fault.Fields{}
	switch {
	case in.Code == nil:
		f.Add("code", "is required")
	case *in.Code == "" || len(*in.Code) > 256:
		f.Add("code", "must be 1-256 characters")
	}
	if err := f.Err(); err != nil {
		return err
	}
	res, err := h.Svc.Exchange(r.Context(), *in.Code, signin.ClientOf(r))
	if err != nil {
		return err
	}
	signin.WriteResult(w, http.StatusOK, res)
	return nil
}

func (h *Handler) check(r *http.Request) (*Check, error) {
	if err := noQuery(r); err != nil {
		return nil, err
	}
	return h.Svc.CheckOrg(r.Context(), r.PathValue("orgId"))
}
