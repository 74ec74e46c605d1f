package config

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// X-Ray subsegments of the AWS SDK calls. With GALE_XRAY=true (the CDK app's
// xray flag, which also turns on the functions' active tracing) every AWS call
// is sent to the Lambda X-Ray daemon (AWS_XRAY_DAEMON_ADDRESS, UDP) as a
// subsegment of the invocation's segment, as the X-Ray SDKs do: service,
// operation, table or queue, request id, status and duration. Only sampled
// invocations are sent; nothing happens at init, and a failed send is ignored.
// (The X-Ray SDK for Go is not used: it links the v1 AWS SDK, which would put
// the largest functions over their size budget.)

// traceSDK adds the X-Ray middleware to cfg when tracing is on.
func traceSDK(cfg *aws.Config, getenv func(string) string) {
	if getenv("GALE_XRAY") != "true" {
		return
	}
	addr := daemonUDP(getenv("AWS_XRAY_DAEMON_ADDRESS"))
	if addr == "" {
		return
	}
	x := &xray{addr: addr, getenv: getenv, now: time.Now}
	cfg.APIOptions = append(cfg.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("GaleXRay", x.handle), middleware.Before)
	})
}

// daemonUDP picks the UDP address of AWS_XRAY_DAEMON_ADDRESS ("host:port" or
// "tcp:host:port udp:host:port").
func daemonUDP(v string) string {
	for _, part := range strings.Fields(v) {
		if rest, ok := strings.CutPrefix(part, "udp:"); ok {
			return rest
		}
		if !strings.Contains(part, ":") || strings.HasPrefix(part, "tcp:") {
			continue
		}
		return part
	}
	return ""
}

type xray struct {
	addr   string
	getenv func(string) string
	now    func() time.Time

	mu   sync.Mutex
	conn net.Conn
}

// subsegment is the X-Ray segment document of one AWS call.
type subsegment struct {
	Name      string         `json:"name"`
	ID        string         `json:"id"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id"`
	Type      string         `json:"type"`
	Namespace string         `json:"namespace"`
	StartTime float64        `json:"start_time"`
	EndTime   float64        `json:"end_time"`
	Error     bool           `json:"error,omitempty"`
	Fault     bool           `json:"fault,omitempty"`
	Throttle  bool           `json:"throttle,omitempty"`
	AWS       map[string]any `json:"aws"`
	HTTP      map[string]any `json:"http,omitempty"`
}

func (x *xray) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	start := x.now()
	out, md, err := next.HandleInitialize(ctx, in)
	root, parent, sampled := traceHeader(ctx, x.getenv)
	if !sampled {
		return out, md, err
	}
	doc := subsegment{Name: awsmiddleware.GetServiceID(ctx), ID: newSegmentID(), TraceID: root, ParentID: parent,
		Type: "subsegment", Namespace: "aws", StartTime: seconds(start), EndTime: seconds(x.now()),
		AWS: map[string]any{"operation": awsmiddleware.GetOperationName(ctx), "region": awsmiddleware.GetRegion(ctx)}}
	if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
		doc.AWS["request_id"] = id
	}
	if name := resourceName(in.Parameters); name != "" {
		doc.AWS["resource_names"] = []string{name}
	}
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
		status := raw.StatusCode
		doc.HTTP = map[string]any{"response": map[string]any{"status": status}}
		doc.Throttle = status == 429
		doc.Error = status >= 400 && status < 500
		doc.Fault = status >= 500
	} else if err != nil {
		doc.Fault = true
	}
	x.send(doc)
	return out, md, err
}

// resourceName is the table or queue an input names, when it has one.
func resourceName(params any) string {
	raw, err := json.Marshal(params)
	if err != nil {
		return ""
	}
	var v struct {
		TableName *string
		QueueUrl  *string
		SecretId  *string
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	for _, s := range []*string{v.TableName, v.QueueUrl, v.SecretId} {
		if s != nil {
			return *s
		}
	}
	return ""
}

// traceHeader reads the invocation's trace header (the Lambda runtime puts it
// in the context and in _X_AMZN_TRACE_ID): Root, Parent and Sampled.
func traceHeader(ctx context.Context, getenv func(string) string) (root, parent string, sampled bool) {
	h, _ := ctx.Value("x-amzn-trace-id").(string)
	if h == "" {
		h = getenv("_X_AMZN_TRACE_ID")
	}
	for _, kv := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "Root":
			root = v
		case "Parent":
			parent = v
		case "Sampled":
			sampled = v == "1"
		}
	}
	return root, parent, sampled && root != "" && parent != ""
}

func (x *xray) send(doc subsegment) {
	body, err := json.Marshal(doc)
	if err != nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn == nil {
		if x.conn, err = net.Dial("udp", x.addr); err != nil {
			x.conn = nil
			return
		}
	}
	_, _ = x.conn.Write(append([]byte(`{"format": "json", "version": 1}`+"\n"), body...))
}

func newSegmentID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
