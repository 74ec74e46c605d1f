package httpapi

import "net/http"

// Call is the handler of a route that only calls and encodes: it calls call
// with the request and writes what it answers as JSON with status. The
// route's line names call (Handle: httpapi.Call(http.StatusOK, h.get)), so a
// grep of the path still finds the code.
func Call[Out any](status int, call func(r *http.Request) (Out, error)) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		out, err := call(r)
		if err != nil {
			return err
		}
		WriteJSON(w, status, out)
		return nil
	}
}

// CallBody is the handler of a route that only decodes, calls and encodes:
// it decodes the JSON body into In (Decode: 400 naming the field; the body
// limit is the route's MaxBody when it sets one, else MaxBody), calls call
// and writes what it answers as JSON with status.
func CallBody[In, Out any](status int, call func(r *http.Request, in In) (Out, error)) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		limit := int64(MaxBody)
		if rl := routeLimit(r.Context()); rl > 0 {
			limit = rl
		}
		var in In
		if err := DecodeLimit(r, &in, limit); err != nil {
			return err
		}
		out, err := call(r, in)
		if err != nil {
			return err
		}
		WriteJSON(w, status, out)
		return nil
	}
}
