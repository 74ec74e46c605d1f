package signin

import (
	"net/http"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Cookie of the refresh token (DECISIONS.md).
const (
	CookieName = "service_refresh_token"
	CookiePath = "/api/v1/auth"
	CSRFHeader = "x-service-csrf"
)

// Handler serves the sign-in routes of /api/v1/auth.
type Handler struct{ Svc *Service }

// Routes registers login, refresh, logout and me.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		// Public by the spec: the credentials are in the body; rate limits guard it.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/login", Access: httpapi.Public, Handle: h.login},
		// Public by the spec: the refresh token (cookie + CSRF header, or body) is the credential.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/refresh", Access: httpapi.Public, Handle: h.refresh},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/logout", Access: httpapi.User, Enrol: true, Handle: h.logout},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/auth/me", Access: httpapi.User, Enrol: true, Handle: h.me},
	)
}

// ClientOf reads the sign-in metadata of r.
func ClientOf(r *http.Request) Client {
	return Client{IP: httpapi.ClientIP(r), SourceIP: httpapi.SourceIP(r), UserAgent: httpapi.UserAgent(r)}
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	f := fault.Fields{}
	if strings.TrimSpace(in.Email) == "" {
		f.Add("email", "is required")
	}
	if in.Password == "" {
		f.Add("password", "is required")
	}
	if err := f.Err(); err != nil {
		return err
	}
	res, err := h.Svc.Login(r.Context(), in.Email, in.Password, ClientOf(r))
	if err != nil {
		return err
	}
	WriteResult(w, http.StatusOK, res)
	return nil
}

// WriteResult answers a sign-in result, setting the refresh cookie when a pair
// was issued.
func WriteResult(w http.ResponseWriter, status int, res Result) {
	if res.Refresh != nil {
		SetRefreshCookie(w, res.Refresh.RefreshToken, res.Refresh.RefreshExpiresAt)
	}
	httpapi.WriteJSON(w, status, res)
}

// SetRefreshCookie sets the HttpOnly, Secure, SameSite=Strict refresh cookie.
func SetRefreshCookie(w http.ResponseWriter, token string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: CookiePath, Expires: expires,
		MaxAge: int(time.Until(expires).Seconds()), HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

// ClearRefreshCookie expires the refresh cookie.
func ClearRefreshCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: CookiePath, MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

func (h *Handler) refresh(w http.ResponseWriter, r *http.Request) error {
	token := ""
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		if strings.TrimSpace(r.Header.Get(CSRFHeader)) == "" {
			return fault.Forbidden("CSRF header x-service-csrf is required").WithDetails(map[string]any{"header": CSRFHeader})
		}
		token = c.Value
	} else if r.ContentLength != 0 {
		var in struct {
			RefreshToken string `json:"refreshToken"`
		}
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		token = in.RefreshToken
	}
	if token == "" {
		return fault.Unauthorized("Refresh token required")
	}
	res, err := h.Svc.Refresh(r.Context(), token, ClientOf(r))
	if err != nil {
		if fe, ok := fault.As(err); ok && fe.Kind == fault.KindUnauthorized {
			ClearRefreshCookie(w)
		}
		return err
	}
	WriteResult(w, http.StatusOK, res)
	return nil
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	if err := h.Svc.Logout(r.Context()); err != nil {
		return err
	}
	ClearRefreshCookie(w)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"success": true})
	return nil
}

func (h *Handler) me(w http.ResponseWriter, r *http.Request) error {
	a, err := h.Svc.Me(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"user": a})
	return nil
}
