package sso

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/signin"
)

// Handler serves /api/v1/sso. Management routes need a bearer JWT (reads
// organizations:read; writes organizations:write + MFA); login, callback,
// exchange and check are public.
//
// DynamoDB calls per request besides authentication:
//
//	route                                  calls           what
//	GET    /sso/presets                    0
//	GET    /sso/providers                  org 1; others 2 organization GetItem; providers Query
//	POST   /sso/providers                  1-2 (+role)     organization GetItem; transaction (provider, pair guard, audit)
//	GET    /sso/providers/:id              1               provider GetItem (organization callers) or GSI1 Query
//	PATCH  /sso/providers/:id              2 (+role)       read; transaction (CAS on version, guards, active row, audit)
//	DELETE /sso/providers/:id              3 + n/100       read; identities Query; a transaction per 100; transaction
//	POST   /sso/providers/:id/status       2               read; transaction (CAS, active row, audit)
//	POST   /sso/providers/:id/test         1               read (+ discovery over HTTPS)
//	GET    /sso/login/:orgId               4-5             rate limit UpdateItem; active row (organization, then partner); provider; login session PutItem (+ discovery)
//	GET    /sso/callback                   6-8 (+role)     rate limit; session Take; provider; identity; account reads; role (ceiling); transaction
//	POST   /sso/exchange                   5 + sign-in     rate limit; code Take; account; memberships; sign-in transaction
//	GET    /sso/check/:orgId               1-2             active row (organization, then partner)
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/presets", Access: httpapi.User, Handle: h.presets},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/providers", Access: httpapi.User, Handle: h.list},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/providers", Access: httpapi.User, MFA: true, Handle: h.create},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/providers/{id}", Access: httpapi.User, Handle: h.get},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/sso/providers/{id}", Access: httpapi.User, MFA: true, Handle: h.patch},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/sso/providers/{id}", Access: httpapi.User, MFA: true, Handle: h.delete},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/providers/{id}/status", Access: httpapi.User, MFA: true, Handle: h.status},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/providers/{id}/test", Access: httpapi.User, MFA: true, Handle: h.test},
		// Public: the browser's sign-in before any session exists.
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/login/{orgId}", Access: httpapi.Public, NoAuthz: true, Handle: h.login},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/callback", Access: httpapi.Public, NoAuthz: true, Handle: h.callback},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sso/exchange", Access: httpapi.Public, NoAuthz: true, Handle: h.exchange},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sso/check/{orgId}", Access: httpapi.Public, NoAuthz: true, Handle: h.check},
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

func (h *Handler) presets(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return err
	}
	ps, err := h.Svc.ListPresets(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.NewList(ps, page))
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return err
	}
	ps, err := h.Svc.List(r.Context(), r.URL.Query().Get("orgId"), r.URL.Query().Get("partnerId"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.NewList(ps, page))
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var in CreateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	p, err := h.Svc.Create(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, p)
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	p, err := h.Svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) patch(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in PatchInput
	if err := httpapi.DecodeBytes(body, &in); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw)
	in.Present, in.Null = map[string]bool{}, map[string]bool{}
	for k, v := range raw {
		in.Present[k] = true
		in.Null[k] = string(v) == "null"
	}
	p, err := h.Svc.Update(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, p)
	return nil
}

// readBody reads a JSON body as httpapi.Decode does (media type, size), for
// PATCH, which also needs to see which fields were named.
func readBody(r *http.Request) ([]byte, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		if r.ContentLength != 0 {
			return nil, fault.Invalid("Content-Type", "must be application/json")
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, httpapi.MaxBody+1))
	if err != nil {
		return nil, fault.BadRequest("Could not read request body").Wrap(err)
	}
	if len(body) > httpapi.MaxBody {
		return nil, fault.New(fault.KindTooLarge, "Request body too large").WithDetails(map[string]any{"limitBytes": httpapi.MaxBody})
	}
	return body, nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) error {
	var in StatusInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	p, err := h.Svc.SetStatus(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) test(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.EmptyBody(r); err != nil {
		return err
	}
	res, err := h.Svc.Test(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
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

func (h *Handler) check(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	c, err := h.Svc.CheckOrg(r.Context(), r.PathValue("orgId"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
	return nil
}
