package mfa

import (
	"net/http"
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/signin"
)

// Handler serves the TOTP, SMS and recovery-code routes of /api/v1/auth.
type Handler struct{ Svc *Service }

// Routes registers the routes. Every one is an enrolment route (Force MFA, in
// the OpenAPI document's conventions, exempts /auth/mfa/* and /auth/phone/*).
// /mfa/verify and /mfa/sms/send make no authorization decision of their own
// (NoAuthz): the login path is public with the temp token as the credential,
// the setup path calls authz.Authenticated (send: the caller's own step-up code).
func (h *Handler) Routes(rt *httpapi.Router) {
	post, user, optional := http.MethodPost, httpapi.User, httpapi.Optional
	rt.Add(
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/setup", Access: user, Enrol: true, Handle: httpapi.Call(http.StatusOK, h.setup)},
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/verify", Access: optional, Enrol: true, NoAuthz: true, Handle: h.verify},
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/enable", Access: user, Enrol: true, Handle: httpapi.CallBody(http.StatusOK, h.enable)},
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/disable", Access: user, Enrol: true, Handle: httpapi.CallBody(http.StatusOK, h.disable)},
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/recovery-codes", Access: user, Enrol: true, Handle: h.recoveryCodes},
		httpapi.Route{Method: post, Path: "/api/v1/auth/phone/verify", Access: user, Enrol: true, Handle: h.phoneVerify},
		httpapi.Route{Method: post, Path: "/api/v1/auth/phone/confirm", Access: user, Enrol: true, Handle: httpapi.CallBody(http.StatusOK, h.phoneConfirm)},
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/sms/enable", Access: user, Enrol: true, Handle: h.smsEnable},
		httpapi.Route{Method: post, Path: "/api/v1/auth/mfa/sms/send", Access: optional, Enrol: true, NoAuthz: true, Handle: h.smsSend},
	)
}

type codeBody struct {
	Code string `json:"code"`
}

// decodeOptional decodes a body that may be absent.
func decodeOptional(r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	return httpapi.Decode(r, v)
}

func (h *Handler) setup(r *http.Request) (*SetupResult, error) {
	return h.Svc.Setup(r.Context())
}

// verify is /auth/mfa/verify: {code, tempToken} finishes a sign-in; {code} with
// a bearer token confirms the pending TOTP setup, exactly as /auth/mfa/enable.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Code      string `json:"code"`
		TempToken string `json:"tempToken"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Code) == "" {
		return fault.Invalid("code", "is required")
	}
	if in.TempToken == "" {
		if authz.FromContext(r.Context()) == nil {
			return fault.Invalid("tempToken", "is required (or sign in to confirm a TOTP setup)")
		}
		res, err := h.Svc.Enable(r.Context(), in.Code)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, res)
		return nil
	}
	res, err := h.Svc.VerifyLogin(r.Context(), in.TempToken, in.Code, signin.ClientOf(r))
	if err != nil {
		return err
	}
	signin.WriteResult(w, http.StatusOK, res)
	return nil
}

func (h *Handler) enable(r *http.Request, in codeBody) (*Enabled, error) {
	return h.Svc.Enable(r.Context(), in.Code)
}

func (h *Handler) disable(r *http.Request, in codeBody) (*Status, error) {
	return h.Svc.Disable(r.Context(), in.Code)
}

func (h *Handler) recoveryCodes(w http.ResponseWriter, r *http.Request) error {
	var in codeBody
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	codes, err := h.Svc.RotateRecovery(r.Context(), in.Code)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"recoveryCodes": codes})
	return nil
}

func (h *Handler) phoneVerify(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		PhoneNumber string `json:"phoneNumber"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.StartPhone(r.Context(), in.PhoneNumber)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}

func (h *Handler) phoneConfirm(r *http.Request, in codeBody) (*Phone, error) {
	return h.Svc.ConfirmPhone(r.Context(), in.Code)
}

func (h *Handler) smsEnable(w http.ResponseWriter, r *http.Request) error {
	var in struct{}
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.EnableSMS(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}

// smsSend is /auth/mfa/sms/send: {tempToken} sends the sign-in code; without a
// temp token, a signed-in caller gets a step-up code for disable or rotation.
func (h *Handler) smsSend(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		TempToken string `json:"tempToken"`
	}
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	if in.TempToken == "" && authz.FromContext(r.Context()) == nil {
		return fault.Invalid("tempToken", "is required")
	}
	var res *Sent
	var err error
	if in.TempToken != "" {
		res, err = h.Svc.SendLoginSMS(r.Context(), in.TempToken)
	} else {
		res, err = h.Svc.SendStepUpSMS(r.Context())
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}
