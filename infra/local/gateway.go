package main

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/routes"
)

// gateway stands in for API Gateway: it turns each request into a payload-v2
// event and invokes the owning function's Lambda handler in-process.
type gateway struct {
	functions map[string]func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	// maxBody is more than any route accepts (agent software uploads take
	// 2 MiB; everything else 1 MiB or less): API Gateway's own limit is 10 MB,
	// but a body no function would read is not held in memory here either.
	maxBody int64
}

func newGateway(handlers map[string]http.Handler) *gateway {
	g := &gateway{functions: map[string]func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error){}, maxBody: 4 << 20}
	for name, h := range handlers {
		g.functions[name] = httpadapter.NewV2(h).ProxyWithContext
	}
	return g
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	grp, ok := routes.Lookup(r.URL.Path)
	fn := g.functions[grp.Function]
	if !ok || fn == nil {
		gatewayError(w, http.StatusNotFound, "Not Found", "not_found")
		return
	}
	ev, err := toEvent(r, g.maxBody)
	if err != nil {
		gatewayError(w, http.StatusRequestEntityTooLarge, "Request body too large", "payload_too_large")
		return
	}
	res, err := fn(r.Context(), ev)
	if err != nil {
		// API Gateway answers a failed integration with 500 and a fixed message.
		httpapi.WriteJSON(w, http.StatusInternalServerError, map[string]string{"message": "Internal Server Error"})
		return
	}
	writeResponse(w, res)
}

// gatewayError answers a request no function serves in the error envelope of
// the OpenAPI document, with a request id of its own (body and X-Request-Id).
func gatewayError(w http.ResponseWriter, status int, msg, code string) {
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	w.Header().Set("X-Request-Id", id)
	httpapi.WriteJSON(w, status, map[string]string{"error": msg, "code": code, "requestId": id})
}

// toEvent builds the API Gateway HTTP API (payload 2.0) event for r.
func toEvent(r *http.Request, maxBody int64) (events.APIGatewayV2HTTPRequest, error) {
	var body []byte
	switch {
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		// No route reads the body of a GET: it is not read here either.
	case r.ContentLength > maxBody:
		return events.APIGatewayV2HTTPRequest{}, errTooLarge
	default:
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || int64(len(body)) > maxBody {
			return events.APIGatewayV2HTTPRequest{}, errTooLarge
		}
	}
	headers := map[string]string{}
	var cookies []string
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if lk == "cookie" {
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lk] = strings.Join(vs, ",")
	}
	// net/http moves Host out of the header map; API Gateway sends it as a header.
	if r.Host != "" {
		headers["host"] = r.Host
	}
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := time.Now().UTC()
	ev := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       "$default",
		RawPath:        r.URL.EscapedPath(),
		RawQueryString: r.URL.RawQuery,
		Cookies:        cookies,
		Headers:        headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID:    "000000000000",
			APIID:        "local",
			DomainName:   r.Host,
			DomainPrefix: "local",
			RequestID:    uuid.NewString(),
			RouteKey:     "$default",
			Stage:        "$default",
			Time:         now.Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent(),
			},
		},
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	if len(body) > 0 {
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev, nil
}

func writeResponse(w http.ResponseWriter, res events.APIGatewayV2HTTPResponse) {
	for k, v := range res.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range res.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range res.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(res.Body); err == nil {
			body = b
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	status := res.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

type localErr string

func (e localErr) Error() string { return string(e) }

const errTooLarge = localErr("request body over the API Gateway limit")
