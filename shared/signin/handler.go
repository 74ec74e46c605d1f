package signin

import (
	"net/http"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Cookie of the refresh token and the CSRF header that must come with it
// (documented on POST /auth/refresh in the OpenAPI document, shared/api).
const (
	CookieName = "service_refresh_token"
	CookiePath = "/api/v1/auth"
	CSRFHeader = "x-service-csrf"
)

// Handler serves the sign-in routes of /api/v1/auth.
type Handler struct{ Svc *Service }

// Routes registers login, refresh, logout, me, scope switching, registration and password reset
// and change.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		// Public by the spec: the credentials are in the body; rate limits guard it.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/login", Access: httpapi.Public, Handle: h.login},
		// Public by the spec: the refresh token (cookie + CSRF header) is the credential.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/refresh", Access: httpapi.Public, Handle: h.refresh},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/logout", Access: httpapi.User, Enrol: true, Handle: h.logout},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/sessions/revoke-others", Access: httpapi.User, Enrol: true, Handle: h.revokeOthers},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/auth/me", Access: httpapi.User, Enrol: true, Handle: h.me},
		// Enrol: a session held by Force MFA's 428 may still leave for a
		// membership that does not force it (Switch checks the target's).
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/switch", Access: httpapi.User, Enrol: true, Handle: h.switchScope},
		// Public by the spec (only with ENABLE_REGISTRATION=true); per-IP limits guard them.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/register", Access: httpapi.Public, Handle: h.register},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/register-partner", Access: httpapi.Public, Handle: h.registerPartner},
		// Public by the spec: always 200; a per-IP limit guards it.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/forgot-password", Access: httpapi.Public, Handle: h.forgotPassword},
		// Public by the spec: the reset token is the credential.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/reset-password", Access: httpapi.Public, Handle: h.resetPassword},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/change-password", Access: httpapi.User, Handle: h.changePassword},
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
		SetRefreshCookie(w, res.Refresh.RefreshToken, res.Refresh.RefreshExpiresAt, res.Refresh.RefreshMaxAge)
	}
	httpapi.WriteJSON(w, status, res)
}

// SetRefreshCookie sets the HttpOnly, Secure, SameSite=Strict refresh cookie.
// maxAge (seconds) comes from the session manager's injected clock, never the
// wall clock, so the cookie lives exactly as long as the token.
func SetRefreshCookie(w http.ResponseWriter, token string, expires time.Time, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/api/v1/auth", Expires: expires,
		MaxAge: max(1, maxAge), HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

// ClearRefreshCookie expires the refresh cookie.
func ClearRefreshCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/api/v1/auth", MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

// refresh rotates the pair. The refresh token travels only in the HttpOnly
// cookie, always with the CSRF header: a token in a JSON body (readable by
// scripts, and sendable cross-site without the header) is refused, so the
// cookie's protections cannot be bypassed.
func (h *Handler) refresh(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength != 0 {
		var in struct {
			RefreshToken *string `json:"refreshToken"`
		}
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		if in.RefreshToken != nil {
			return fault.Invalid("refreshToken", "is not accepted in the body; send the "+CookieName+" cookie with the "+CSRFHeader+" header")
		}
	}
	token := ""
	if c, err := r.Cookie(CookieName); err == nil {
		token = c.Value
	}
	if token == "" {
		return fault.Unauthorized("Refresh token required")
	}
	if strings.TrimSpace(r.Header.Get(CSRFHeader)) == "" {
		return fault.Forbidden("CSRF header x-service-csrf is required").WithDetails(map[string]any{"header": CSRFHeader})
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

func (h *Handler) revokeOthers(w http.ResponseWriter, r *http.Request) error {
	n, err := h.Svc.RevokeOthers(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"success": true, "revoked": n})
	return nil
}

func (h *Handler) me(w http.ResponseWriter, r *http.Request) error {
	a, ms, err := h.Svc.Me(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"user": a, "memberships": ms})
	return nil
}

func (h *Handler) switchScope(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		MembershipID string `json:"membershipId"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.MembershipID) == "" {
		return fault.Invalid("membershipId", "is required")
	}
	res, err := h.Svc.Switch(r.Context(), in.MembershipID, ClientOf(r))
	if err != nil {
		return err
	}
	WriteResult(w, http.StatusOK, res)
	return nil
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request) error {
	if !h.Svc.EnableRegistration {
		return ErrRegistrationDisabled // before decoding: a disabled route reveals nothing
	}
	var in Registration
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.Register(r.Context(), in, ClientOf(r))
	if err != nil {
		return err
	}
	WriteResult(w, http.StatusCreated, res)
	return nil
}

func (h *Handler) registerPartner(w http.ResponseWriter, r *http.Request) error {
	if !h.Svc.EnableRegistration {
		return ErrRegistrationDisabled
	}
	var in PartnerRegistration
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.RegisterPartner(r.Context(), in, ClientOf(r))
	if err != nil {
		return err
	}
	WriteResult(w, http.StatusCreated, res)
	return nil
}

func (h *Handler) forgotPassword(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email string `json:"email"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	if err := h.Svc.ForgotPassword(r.Context(), in.Email, ClientOf(r)); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"success": true, "message": ResetRequested})
	return nil
}

func (h *Handler) resetPassword(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	if err := h.Svc.ResetPassword(r.Context(), in.Token, in.Password, ClientOf(r)); err != nil {
		return err
	}
	// Every refresh token of the user is dead now; drop this browser's too.
	ClearRefreshCookie(w)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"success": true,
		"message": "Password has been reset. Sign in with your new password."})
	return nil
}

func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		CurrentPassword string `json:"currentPassword"`
		NewPassword     string `json:"newPassword"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.ChangePassword(r.Context(), in.CurrentPassword, in.NewPassword, ClientOf(r))
	if err != nil {
		return err
	}
	WriteResult(w, http.StatusOK, res)
	return nil
}
