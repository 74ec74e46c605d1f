package session

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// JWKSPath publishes the public keys of access tokens (current, then previous
// during a rotation), served by the auth function, which holds them.
const JWKSPath = "/api/v1/.well-known/jwks.json"

// KeysHandler serves the JWKS document.
type KeysHandler struct{ Keys *KeyRing }

// Routes registers GET /api/v1/.well-known/jwks.json.
func (h *KeysHandler) Routes(rt *httpapi.Router) {
	// Public by design: clients and other services verify tokens with these
	// keys; a public key reveals nothing. No authorization decision to make.
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/.well-known/jwks.json", Access: httpapi.Public, NoAuthz: true, Handle: h.get})
}

func (h *KeysHandler) get(w http.ResponseWriter, r *http.Request) error {
	if q := r.URL.Query(); len(q) > 0 {
		for name := range q { // the route takes no query: name one parameter it was sent
			return fault.Invalid(name, "unknown query parameter")
		}
	}
	set := h.Keys.JWKS(r.Context())
	// Caches may keep it as long as a verifier keeps its own copy.
	w.Header().Set("Cache-Control", "public, max-age=300")
	httpapi.WriteJSON(w, http.StatusOK, JWKS{Keys: set.Keys})
	return nil
}
