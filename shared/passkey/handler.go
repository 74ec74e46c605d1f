package passkey

import (
	"encoding/json"
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/signin"
)

// Handler serves the passkey routes of /api/v1/auth. The /auth/passkeys routes
// need a user session and are open to Force MFA users who have not enrolled yet
// (Force MFA in the OpenAPI document); the /auth/mfa/passkey routes are public: the MFA temp token of
// the login is their credential.
//
// What each route reads and writes (budgets: docs/budgets.md, from tests/fixture/budgets.go). "Auth" is
// authentication (one BatchGetItem of profile, session and membership, one
// GetItem of a custom role; system roles are resolved from code). "Policy" is the MFA policy of every organization the user belongs to:
// one query of the user's memberships plus one GetItem of security settings per
// organization membership (usually one; none for partner and system users).
//
//	route                                    what
//	POST   /auth/passkeys/register/options   auth, policy, rate-limit update, profile, passkeys query, challenge put
//	POST   /auth/passkeys/register/verify    auth, policy, challenge take (one delete returning it), profile,
//	                                         transaction (passkey, profile compare-and-swap, audit)
//	GET    /auth/passkeys                    auth, passkeys query
//	PATCH  /auth/passkeys/:id                auth, conditional update returning the passkey
//	DELETE /auth/passkeys/:id                auth, rate-limit update, profile, passkeys query, transaction
//	                                         (delete, profile compare-and-swap, audit); + the policy reads when it
//	                                         removes the last factor, which a Force MFA role refuses before the transaction
//	POST   /auth/mfa/passkey/options         temp token, profile, passkeys query, challenge put
//	POST   /auth/mfa/passkey/verify          temp token, profile, rate-limit update, challenge take, passkeys query,
//	                                         memberships query, transaction (session, profile, temp token spend,
//	                                         sign-count compare-and-swap, audit, outbox), outbox clear
type Handler struct{ Svc *Service }

// Routes registers the passkey routes.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/passkeys/register/options", Access: httpapi.User, Enrol: true, Handle: h.registerOptions},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/passkeys/register/verify", Access: httpapi.User, Enrol: true, Handle: h.registerVerify},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/auth/passkeys", Access: httpapi.User, Enrol: true, Handle: h.list},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/auth/passkeys/{id}", Access: httpapi.User, Enrol: true, Handle: h.rename},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/auth/passkeys/{id}", Access: httpapi.User, Enrol: true, Handle: h.remove},
		// Public by the spec: the MFA temp token of the pending login is the credential.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/mfa/passkey/options", Access: httpapi.Public, Handle: h.loginOptions},
		// Public by the spec: the temp token and the signed assertion are the credentials.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/mfa/passkey/verify", Access: httpapi.Public, Handle: h.loginVerify},
	)
}

// List defaults (the Page and Limit parameters of the OpenAPI document).
const (
	pageDefault = 50
	pageMax     = 100
)

func (h *Handler) registerOptions(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		CurrentPassword string `json:"currentPassword"`
		Name            string `json:"name"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	creation, err := h.Svc.RegisterOptions(r.Context(), in.CurrentPassword, in.Name)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, creation)
	return nil
}

func (h *Handler) registerVerify(w http.ResponseWriter, r *http.Request) error {
	// The body is the credential JSON itself (see the OpenAPI document): a JSON object under
	// the body limit, handed to go-webauthn's parser as is.
	var raw json.RawMessage
	if err := httpapi.Decode(r, &raw); err != nil {
		return err
	}
	reg, err := h.Svc.RegisterVerify(r.Context(), raw)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, reg)
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	pg, err := httpapi.ParsePage(r, pageDefault, pageMax)
	if err != nil {
		return err
	}
	keys, err := h.Svc.List(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.NewList(keys, pg))
	return nil
}

func (h *Handler) rename(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.Svc.Rename(r.Context(), r.PathValue("id"), in.Name)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (h *Handler) remove(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		CurrentPassword string `json:"currentPassword"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	if err := h.Svc.Delete(r.Context(), r.PathValue("id"), in.CurrentPassword); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

func (h *Handler) loginOptions(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		TempToken string `json:"tempToken"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	assertion, err := h.Svc.LoginOptions(r.Context(), in.TempToken)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, assertion)
	return nil
}

func (h *Handler) loginVerify(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		TempToken  string          `json:"tempToken"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.LoginVerify(r.Context(), in.TempToken, in.Credential, signin.ClientOf(r))
	if err != nil {
		return err
	}
	signin.WriteResult(w, http.StatusOK, res)
	return nil
}
