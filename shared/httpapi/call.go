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
// it decodes the JSON body into In (Decode: 400 naming the field), calls call
// and writes what it answers as JSON with status.
func CallBody[In, Out any](status int, call func(r *http.Request, in In) (Out, error)) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in In
		if err := Decode(r, &in); err != nil {
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
