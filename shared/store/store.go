// Package store is Gale's single-table DynamoDB client: key builders that always
// take the tenant, conditional writes that map ConditionalCheckFailed to typed
// errors, a transaction builder, list helpers and TTL handling. It knows keys,
// items and transactions, not HTTP and not business rules.
//
// # Table
//
// One table, generic attributes PK, SK, GSI1PK/GSI1SK, GSI2PK/GSI2SK, and "ttl"
// (epoch seconds; DynamoDB deletes lazily, so reads here also hide expired items).
// Every tenant item has its tenant in PK. Uniqueness (e-mail, key hash) is a
// separate item written in the same transaction as the thing it guards.
//
// # Access patterns
//
// Each domain package documents its own rows in its package doc; this is the
// index. Tenant partitions are ORG#<id> and PARTNER#<id>, built only by OrgPK,
// PartnerPK and TenantPK (tenant.go; a test refuses the prefixes spelled outside
// this package and shared/tenant); OrgRows is the one repository of rows an
// organization owns and that are also found by id. User-owned rows live in the
// user's partition USER#<id>.
//
//	entity              PK / SK                                  GSI1PK / GSI1SK                    GSI2PK / GSI2SK          owner
//	partner             PARTNER#<id> / PARTNER                   -                                  PARTNERS / <id>          tenant
//	organization        ORG#<id> / ORG                           PARTNER#<pid>#ORGS / <id>          ORGS / <id>              tenant
//	                    GSI3 PARTNER#<pid>#ORGLIST / <lower name>\x01<id>, GSI4 ORG#<id>#ORGLIST / same (list indexes)
//	security settings   ORG#<id> / SECURITY                      -                                  -                        tenant
//	admin epoch         ORG#<id> or PARTNER#<id> / ADMINS        -                                  -                        user (last-administrator guard)
//	site                ORG#<oid> / SITE#<id>                    SITEREF#<id> / SITE                -                        tenant
//	                    GSI4 ORG#<oid>#SITES / <lower name>\x01<id> (list index)
//	device group        ORG#<oid> / DGROUP#<id>                  DGROUPREF#<id> / DGROUP            -                        tenant
//	                    GSI4 ORG#<oid>#DGROUPS / <lower name>\x01<id> (list index)
//	user                USER#<id> / PROFILE                      -                                  -                        user
//	e-mail guard        EMAIL#<lower e-mail> / EMAIL             -                                  -                        user
//	membership          USER#<uid> / MEMBER#<scope>#<tenant>     MEMBERS#<scope>#<tenant> / USER#<uid>  ROLEUSERS#<role> / <uid>  user
//	session             USER#<uid> / SESSION#<sid>               -                                  -                        session
//	invitation          USER#<uid> / INVITE#<scope>#<tenant>     -                                  -                        user
//	reset token         USER#<uid> / PWRESET                     -                                  -                        signin
//	passkey             USER#<uid> / PASSKEY#<credential id>     -                                  -                        passkey
//	passkey challenge   PKCHAL#<sha256> / REGISTER|ASSERT        -                                  -                        passkey
//	push targets        USER#<uid> / PUSHTARGETS                 -                                  -                        push
//	push token guard    PUSHTOKEN#<sha256> / PUSHTOKEN           -                                  -                        push
//	mobile approval     ORG#<oid> / MAPPR#<elevation>#<uid>      -                                  -                        push
//	MFA temp token      MFATEMP#<sha256> / MFATEMP               -                                  -                        signin
//	attempt count       ATTEMPT#<rule>#<hash> / ATTEMPT          -                                  -                        attempt (login lockout)
//	role (custom)       ROLES#<owner> / ROLE#<id>                ROLEREF#<id> / ROLE                -                        role (system roles live in code only)
//	role name guard     ROLES#<owner> / NAME#<lower name>        -                                  -                        role
//	enrollment key      ORG#<oid> / EKEY#<id>                    EKEYREF#<id> / EKEY                EKEYEXP / <expiresAt>#<oid>#<id>  enrollment
//	                    GSI3 PARTNER#<pid>#EKEYS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#EKEYS / same (read descending)
//	enrollment key hash EKEYHASH#<hmac> / EKEY                   -                                  -                        enrollment
//	device              ORG#<oid> / DEVICE#<id>                  -                                  (legacy DEVSEEN#, removed on write)  device
//	                    GSI5 SEEN#<shard of 64> / <5-minute bucket start>#<id> (online only; keys only, provision.go)
//	                    GSI3 PARTNER#<pid>#DEVICES / <lower hostname>\x01<id>, GSI4 ORG#<oid>#DEVICES / same (list indexes)
//	agent credential    AGENT#<device id> / AGENT                -                                  -                        device
//	software chunk      ORG#<oid> / DEVSW#<device id>#<nnn>      -                                  -                        device
//	command result      ORG#<oid> / CMDRESULT#<device>#<command> -                                  -                        device
//	alert               ORG#<oid> / ALERT#<id>                   ALERTREF#<id> / ALERT              -                        alert
//	                    GSI3 PARTNER#<pid>#ALERTS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#ALERTS / same (read descending)
//	API key             ORG#<oid> / APIKEY#<id>                  APIKEYREF#<id> / APIKEY            -                        apikey
//	                    GSI3 PARTNER#<pid>#APIKEYS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#APIKEYS / same (read descending)
//	                    GSI2 APIKEYCREATOR#<creator uid> / <pid>#<oid>#<id> (the keys a member created, revoked on removal)
//	API key guard       APIKEYHASH#<sha256> / APIKEY             -                                  -                        apikey
//	service principal   ORG#<oid> / SP#<id>                      SPREF#<id> / SP                    -                        apikey
//	                    GSI3 PARTNER#<pid>#PRINCIPALS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#PRINCIPALS / same (read descending)
//	script              ORG#<oid> / SCRIPT#<id>                  SCRIPTREF#<id> / SCRIPT            -                        script
//	                    GSI3 PARTNER#<pid>#SCRIPTS / <lower name>\x01<id>, GSI4 ORG#<oid>#SCRIPTS / same (list indexes)
//	saved filter        ORG#<oid> / FILTER#<id>                  FILTERREF#<id> / FILTER            -                        savedfilter
//	                    GSI3 PARTNER#<pid>#FILTERS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#FILTERS / same (read descending)
//	SSO provider        ORG#<oid> or PARTNER#<pid> / SSOPROV#<id>  SSOPROVREF#<id> / SSOPROV      -                        sso
//	                    GSI4 ORG#<oid>#SSOPROVS or PARTNER#<pid>#SSOPROVS / <createdAt>#<id> (one owner's list; no GSI3)
//	webhook             ORG#<oid> / WEBHOOK#<id>                 WEBHOOKREF#<id> / WEBHOOK          -                        webhook
//	                    GSI3 PARTNER#<pid>#WEBHOOKS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#WEBHOOKS / same (read descending)
//	webhook delivery    ORG#<oid> / WHDLV#<webhook>#<id>         -                                  -                        webhook
//	audit record        AUDIT#<tenant> / <time>#<id>             -                                  -                        audit
//	outbox event        OUTBOX#<00..15> / <time>#<id>            -                                  -                        event
//	rate-limit window   RL#<rule>#<subject> / WIN                -                                  -                        ratelimit
//	access review       ORG#<oid> or PARTNER#<pid> / REVIEW#<id> -                                  REVIEWCOMPLETING / <at>#<tenant>#<id> (completing)  review
//	review item         REVIEW#<rid> / ITEM#<id>                 -                                  -                        review
//	deletion request    DELREQ#<id> / DELREQ                     DELREQDUE#<status> / <processBy>#<id> (open)  DELREQS / <requestedAt>#<id>  deletion
//	open deletion guard USER#<uid> / DELREQ#OPEN                 -                                  -                        deletion
//	deletion index      DELREQS#<ORG#oid|PARTNER#pid> / <requestedAt>#<id>  -                       -                        deletion
//	backfill progress   BACKFILL / LISTINDEX                     -                                  -                        backfill (list-index backfill's scan cursor)
//
// List indexes: GSI3 (partner-keyed) and GSI4 (organization-keyed) hold a
// list's rows in the list's order and project ListAttributes only; Window reads
// one page from them (the page's keys, then its items by BatchGetItem), Merge
// reads one page of a list spread over several partitions (a system caller's:
// every partner's GSI3 partition and each partnerless organization's GSI4
// partition, merged by sort key), and Count counts a partition's rows for a
// total no counter holds. tenant.List picks the partition(s) by the caller's
// scope.
// Rows written before their list had an index get their keys from Backfill
// (shared/backfill, the sweeper's list-index-backfill job).
//
// Queries: a user's memberships, sessions and passkeys are prefix queries of
// USER#<uid>; a tenant's users are one GSI1 query; a role's holders one GSI2
// query; a partner's organizations one GSI1 query; all organizations (system
// scope) one GSI2 query; an organization's sites and device groups are read
// a page at a time from GSI4; prefix queries of ORG#<oid> read its
// enrollment keys, devices and software
// chunks, its webhooks, and (newest first, by time-ordered ids) a webhook's
// deliveries. A device, enrollment key or webhook by its own id goes through its
// agent row (GetItem) or GSI1; agent enrollment finds a key by its hash guard (GetItem); the
// sweeper finds expired enrollment keys in GSI2 EKEYEXP and stale devices in the
// 64 GSI5 SEEN shards (and the legacy GSI2 DEVSEEN shards while rows written
// before GSI5 remain), reading only what it changes. Rows with a ttl
// (sessions, challenges, temp tokens, locks, rate-limit buckets, reset tokens)
// are also hidden by reads once expired.
//
// The outbox is spread over 16 partitions (OUTBOX#00..OUTBOX#15, by a hash of
// the event id) so no partition takes every event write; the sweeper drains them
// one after another, leasing each item (leaseUntil, leaseId) before sending it.
//
// Every write that moves a state does so with a condition (compare-and-swap);
// multi-item changes go through Tx.
//
// # Writing
//
// Domain store.go files build updates and conditions with
// github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression and pass the builders
// to Change (update), Assert (condition check), Write.When (condition) and
// Query.Where (filter); Present, Absent and Is are the common conditions. No
// domain code spells an expression string; the store offers no string form.
// A write added with Tx.Include is its own handle: after a cancelled commit,
// TxError.FailedOn(handle) tells whether that write failed its condition,
// whatever its position. BatchGet takes any number of keys and makes one
// BatchGetItem call per 100.
//
// # Capacity
//
// DynamoDB bills capacity units, not calls, so each request's units are a
// figure like its calls: CountCalls asks every operation for its consumed
// capacity (ReturnConsumedCapacity TOTAL) and adds it to the context's Calls
// (RCU, WCU), which the edge logs (dbRCU, dbWCU beside dbCalls) and emits as
// metrics, and which tests hold to each operation's capacity budget
// (tests/fixture). In AWS the figures are DynamoDB's own; the emulator
// computes them from the rows by DynamoDB's sizing rules, written here as
// ItemSize, WriteUnits and ReadUnits (TestEmulatorBillsLikeTheSizingRules
// holds the two to the same figures):
//
//   - an item's size: the UTF-8 bytes of each attribute name plus its value
//     (a string its bytes, a number 1 byte per two significant digits plus 1,
//     binary its bytes, a boolean or null 1, a set its members, a list or map
//     3 bytes plus 1 per element plus the elements and map keys);
//   - a write: one unit per started KB of the larger of the item before and
//     after (at least 1), and again for each global index whose projection it
//     changes (a new or removed entry its projected size, a changed index key
//     a delete plus a put, an unchanged projection nothing); twice in a
//     transaction, condition checks included;
//   - a read: one unit per started 4 KB (a Query or Scan: of what it read in
//     all, before any filter), half when eventually consistent, twice in a
//     transaction.
//
// A write refused by its condition is billed by DynamoDB but its error does
// not report the units: CountCalls counts one unit per started KB of the item
// the refusal answered back (ALL_OLD; at least 1), and two a member of a
// cancelled transaction.
package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
)

// Item is a raw DynamoDB item.
type Item = map[string]types.AttributeValue

// Keys are the generic key attributes a record embeds. attributevalue flattens
// embedded structs, so a record is one item; json:"-" keeps keys out of responses.
type Keys struct {
	PK     string `dynamodbav:"PK" json:"-"`
	SK     string `dynamodbav:"SK" json:"-"`
	GSI1PK string `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK string `dynamodbav:"GSI1SK,omitempty" json:"-"`
	GSI2PK string `dynamodbav:"GSI2PK,omitempty" json:"-"`
	GSI2SK string `dynamodbav:"GSI2SK,omitempty" json:"-"`
	GSI3PK string `dynamodbav:"GSI3PK,omitempty" json:"-"`
	GSI3SK string `dynamodbav:"GSI3SK,omitempty" json:"-"`
	GSI4PK string `dynamodbav:"GSI4PK,omitempty" json:"-"`
	GSI4SK string `dynamodbav:"GSI4SK,omitempty" json:"-"`
	TTL    int64  `dynamodbav:"ttl,omitempty" json:"-"`
}

// Index names. GSI1 and GSI2 project every attribute. GSI3 and GSI4 are the
// list indexes: a partner-keyed one (GSI3, for lists that cross the
// organizations of a partner) and an organization-keyed one (GSI4), each sorted
// in a list's order. They project only the keys and ListAttributes, so a
// heartbeat that changes a device's facts writes neither; a list reads the
// page's keys from them and the page's items by BatchGetItem (Store.Window).
const (
	GSI1 = "GSI1"
	GSI2 = "GSI2"
	GSI3 = "GSI3"
	GSI4 = "GSI4"
)

// ListAttributes are the non-key attributes the list indexes project: what a
// list needs to apply a caller's reach (organization, partner, site, device
// groups; an alert's deviceId) and its filters (status, severity; expiresAt
// for filters that depend on the time, such as enrollment keys' expired)
// before it reads a row. A device's status changes only on a transition, so
// heartbeats still write no list index.
var ListAttributes = []string{"orgId", "partnerId", "siteId", "groupIds", "status", "severity", "deviceId", "expiresAt"}

// Errors of the store. They are fault kinds, so errors.Is(err, fault.ErrConflict)
// holds for ErrConditionFailed and the edge maps them without help.
var (
	ErrNotFound        = fault.NotFound("Not found")
	ErrConditionFailed = fault.Conflict("Conflict")
)

// Store is the table client. Methods take full keys; key builders below force the
// tenant into them.
type Store struct {
	DB    *dynamodb.Client
	Table string
	Clock clock.Clock
}

// New returns a store over table.
func New(db *dynamodb.Client, table string, clk clock.Clock) *Store {
	return &Store{DB: db, Table: table, Clock: clk}
}

// Key is a primary key item.
func Key(pk, sk string) Item {
	return Item{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}
}

// TTL returns the ttl attribute value for an expiry time.
func TTL(t time.Time) int64 { return t.Unix() }

// Marshal turns a record into an item.
func Marshal(v any) (Item, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("store: marshal %T: %w", v, err)
	}
	return item, nil
}

// Unmarshal fills out from item.
func Unmarshal(item Item, out any) error {
	if err := attributevalue.UnmarshalMap(item, out); err != nil {
		return fmt.Errorf("store: unmarshal %T: %w", out, err)
	}
	return nil
}

// Values marshals expression attribute values; keys must start with ':'.
func Values(v map[string]any) (Item, error) {
	if len(v) == 0 {
		return nil, nil
	}
	return attributevalue.MarshalMap(v)
}

// expired reports whether item carries a ttl in the past.
func (s *Store) expired(item Item) bool {
	n, ok := item["ttl"].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	var ttl int64
	if _, err := fmt.Sscan(n.Value, &ttl); err != nil || ttl == 0 {
		return false
	}
	return ttl <= s.Clock.Now().Unix()
}

// Get reads one item into out; ErrNotFound when absent or expired.
func (s *Store) Get(ctx context.Context, pk, sk string, out any) error {
	res, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Table, Key: Key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("store: get %s/%s: %w", pk, sk, err)
	}
	if res.Item == nil || s.expired(res.Item) {
		return ErrNotFound
	}
	return Unmarshal(res.Item, out)
}

// Write is one conditional write: a Put, a Change (update), a Delete or an
// Assert (condition check), with conditions and updates built with the
// expression package.
type Write struct {
	put    any
	key    Item
	delete bool
	check  bool
	exists bool
	upd    *expression.UpdateBuilder
	when   *expression.ConditionBuilder
}

// Contextual is a record that takes something of the request it is written in
// (the audit record: the request id, address and user agent), so the writes
// built without a context (audit.Put, ninety of them) still carry it.
type Contextual interface {
	InContext(ctx context.Context) any
}

func inContext(ctx context.Context, record any) any {
	if c, ok := record.(Contextual); ok {
		return c.InContext(ctx)
	}
	return record
}

// Put writes a whole record, optionally under a condition.
func Put(record any) *Write { return &Write{put: record} }

// PutNew writes record only if no item has its key (create, uniqueness guards).
func PutNew(record any) *Write { return Put(record).When(Absent()) }

// Delete removes the item at pk/sk.
func Delete(pk, sk string) *Write { return &Write{key: Key(pk, sk), delete: true} }

// Exists requires the item to exist (updates and deletes of known records), in
// addition to any other condition.
func (w *Write) Exists() *Write { w.exists = true; return w }

// exprParts returns the condition, the update expression (for updates) and
// their bound names and values.
func (w *Write) exprParts() (cond, update *string, names map[string]string, vals Item, err error) {
	c := w.when
	if w.exists {
		e := Present()
		if c != nil {
			e = e.And(*c)
		}
		c = &e
	}
	if c == nil && w.upd == nil {
		return nil, nil, nil, nil, nil
	}
	b := expression.NewBuilder()
	if c != nil {
		b = b.WithCondition(*c)
	}
	if w.upd != nil {
		b = b.WithUpdate(*w.upd)
	}
	ex, err := b.Build()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("store: write %s: expression: %w", w.describe(), err)
	}
	if len(ex.Names()) > 0 {
		names = make(map[string]string, len(ex.Names()))
		for k, v := range ex.Names() {
			names[k] = v
		}
	}
	return ex.Condition(), ex.Update(), names, ex.Values(), nil
}

func (w *Write) describe() string {
	if w.put != nil {
		return fmt.Sprintf("put %T", w.put)
	}
	pk, sk := "", ""
	if v, ok := w.key["PK"].(*types.AttributeValueMemberS); ok {
		pk = v.Value
	}
	if v, ok := w.key["SK"].(*types.AttributeValueMemberS); ok {
		sk = v.Value
	}
	return pk + "/" + sk
}

// TokenAttr is the attribute in which a single-item write leaves its write
// token (see Do). A transaction's writes leave it as it was (a transaction is
// idempotent by its client token instead), so a condition on "the token I
// read" does not see a change made in a transaction unless that write sets a
// fresh token itself (ratelimit's counts do: Pending.Settle).
const TokenAttr = "wtok"

// newToken makes a write token (replaced by tests that replay a write).
var newToken = func() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tokened adds the write token tok to an update: SET wtok = tok, and the
// condition that wtok is not tok yet, so a retry of an applied update fails
// (and is recognised) instead of applying twice.
func tokened(cond, update *string, names map[string]string, vals Item, tok string) (*string, *string, map[string]string, Item) {
	if names == nil {
		names = map[string]string{}
	}
	if vals == nil {
		vals = Item{}
	}
	names["#wtok"], vals[":wtok"] = TokenAttr, &types.AttributeValueMemberS{Value: tok}
	u := aws.ToString(update)
	lines := strings.Split(strings.TrimSpace(u), "\n")
	set := false
	for i, l := range lines {
		if strings.HasPrefix(l, "SET ") {
			lines[i], set = "SET #wtok = :wtok, "+strings.TrimPrefix(l, "SET "), true
		}
	}
	if !set {
		lines = append(lines, "SET #wtok = :wtok")
	}
	u = strings.Join(lines, "\n")
	fresh := "attribute_not_exists(#wtok) OR #wtok <> :wtok"
	if cond == nil {
		cond = &fresh
	} else {
		cond = aws.String("(" + *cond + ") AND (" + fresh + ")")
	}
	return cond, &u, names, vals
}

// applied reports whether old, the item a failed condition found, carries tok:
// the write had applied on an earlier attempt whose answer was lost.
func applied(old Item, tok string) bool {
	v, ok := old[TokenAttr].(*types.AttributeValueMemberS)
	return ok && v.Value == tok
}

// Do runs a single write. A failed condition is ErrConditionFailed.
//
// Every write is safe when its response is lost and the SDK retries it, as
// DynamoDB requires (only transactions are idempotent there, by token): a put
// or update carries a write token (attribute wtok), its condition failure is
// read with ReturnValuesOnConditionCheckFailure ALL_OLD, and finding its own
// token there means the write had applied; an update without a condition gets
// "not this token yet" as one, so a retry never applies twice. A conditional
// delete runs as a one-item transaction with a client token.
func (s *Store) Do(ctx context.Context, w *Write) error {
	_, err := s.write(ctx, w, false)
	return err
}

// write runs w; with returnNew it answers the item after an update (ALL_NEW,
// or, when a lost answer is recognised, the item as that write left it).
func (s *Store) write(ctx context.Context, w *Write, returnNew bool) (Item, error) {
	cond, update, names, vals, err := w.exprParts()
	if err != nil {
		return nil, err
	}
	tok := newToken()
	onFail := types.ReturnValuesOnConditionCheckFailureAllOld
	var ccf *types.ConditionalCheckFailedException
	switch {
	case w.put != nil:
		item, err := Marshal(inContext(ctx, w.put))
		if err != nil {
			return nil, err
		}
		item[TokenAttr] = &types.AttributeValueMemberS{Value: tok}
		_, err = s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Table, Item: item,
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			ReturnValuesOnConditionCheckFailure: onFail})
		if errors.As(err, &ccf) && applied(ccf.Item, tok) {
			return nil, nil
		}
		return nil, mapErr(err, w)
	case w.delete && cond != nil:
		_, err = s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(tok),
			TransactItems: []types.TransactWriteItem{{Delete: &types.Delete{TableName: &s.Table, Key: w.key,
				ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals}}}})
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) && len(tce.CancellationReasons) > 0 && aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
			return nil, ErrConditionFailed.Wrap(fmt.Errorf("store: %s: condition failed", w.describe()))
		}
		if err != nil && strings.Contains(err.Error(), "ConditionalCheckFailed") {
			return nil, ErrConditionFailed.Wrap(fmt.Errorf("store: %s: condition failed", w.describe()))
		}
		return nil, mapErr(err, w)
	case w.delete:
		_, err = s.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.Table, Key: w.key})
		return nil, mapErr(err, w)
	case update != nil:
		cond, update, names, vals = tokened(cond, update, names, vals, tok)
		in := &dynamodb.UpdateItemInput{TableName: &s.Table, Key: w.key,
			UpdateExpression: update, ConditionExpression: cond, ExpressionAttributeNames: names,
			ExpressionAttributeValues: vals, ReturnValuesOnConditionCheckFailure: onFail}
		if returnNew {
			in.ReturnValues = types.ReturnValueAllNew
		}
		res, err := s.DB.UpdateItem(ctx, in)
		if errors.As(err, &ccf) {
			if applied(ccf.Item, tok) {
				return ccf.Item, nil
			}
			return ccf.Item, mapErr(err, w)
		}
		if err != nil {
			return nil, mapErr(err, w)
		}
		return res.Attributes, nil
	}
	return nil, fmt.Errorf("store: write %s: nothing to do", w.describe())
}

// UpdateReturn runs an update and unmarshals the item as it is after the update.
func (s *Store) UpdateReturn(ctx context.Context, w *Write, out any) error {
	if w.upd == nil {
		return fmt.Errorf("store: update %s: no update expression", w.describe())
	}
	item, err := s.write(ctx, w, true)
	if err != nil {
		return err
	}
	return Unmarshal(item, out)
}

// Update runs an update and answers the whole item after it (ALL_NEW). When
// its condition fails it answers ErrConditionFailed and the item as it was
// (nil when absent), read by the same call (ReturnValuesOnConditionCheckFailure).
func (s *Store) Update(ctx context.Context, w *Write) (Item, error) {
	if w.upd == nil {
		return nil, fmt.Errorf("store: update %s: no update expression", w.describe())
	}
	return s.write(ctx, w, true)
}

func mapErr(err error, w *Write) error {
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ErrConditionFailed.Wrap(fmt.Errorf("store: %s: condition failed", w.describe()))
	}
	return fmt.Errorf("store: %s: %w", w.describe(), err)
}

// MaxTxItems is DynamoDB's limit for one transaction.
const MaxTxItems = 100

// Tx collects writes for one TransactWriteItems call.
type Tx struct{ writes []*Write }

// Add appends writes; nil writes are skipped so callers can add optional parts.
// It returns the transaction, so additions chain.
func (t *Tx) Add(ws ...*Write) *Tx {
	for _, w := range ws {
		if w != nil {
			t.writes = append(t.writes, w)
		}
	}
	return t
}

// Include appends one write and returns its handle: after a cancelled commit,
// TxError.FailedOn(handle) tells whether that write failed its condition. The
// handle is the write itself, so a write built before Add is its own handle too.
func (t *Tx) Include(w *Write) *Write {
	t.Add(w)
	return w
}

// Len is the number of writes so far.
func (t *Tx) Len() int { return len(t.writes) }

// TxError tells which writes of a cancelled transaction failed their condition.
type TxError struct {
	// Failed holds the positions of writes whose condition failed; -1 when the
	// backend gave no reasons. Prefer FailedOn, which does not depend on order.
	Failed []int
	failed []*Write
	// unknown is set when the backend gave no reasons: every write may have failed.
	unknown bool
	cause   error
}

func (e *TxError) Error() string { return fmt.Sprintf("store: transaction cancelled: %v", e.cause) }

// Unwrap yields the cause and, for a failed condition, ErrConditionFailed, so the
// edge (fault.As) answers 409 rather than 500.
func (e *TxError) Unwrap() []error {
	if len(e.Failed) > 0 {
		return []error{e.cause, ErrConditionFailed}
	}
	return []error{e.cause}
}

// Is makes a condition-failed transaction match ErrConditionFailed and fault.ErrConflict.
func (e *TxError) Is(target error) bool {
	return len(e.Failed) > 0 && (target == ErrConditionFailed || target == fault.ErrConflict)
}

// FailedOn reports whether the write with handle w (the value Tx.Include
// returned, or the write passed to Tx.Add) failed its condition. When the
// backend gave no cancellation reasons it answers true for every write.
func (e *TxError) FailedOn(w *Write) bool {
	if e.unknown {
		return true
	}
	for _, f := range e.failed {
		if f == w {
			return true
		}
	}
	return false
}

// FailedAt reports whether write i failed its condition (positional; kept for
// packages not yet converted to FailedOn).
func (e *TxError) FailedAt(i int) bool {
	for _, f := range e.Failed {
		if f == i {
			return true
		}
	}
	return false
}

// Commit runs the transaction. One write (other than a lone Assert, which only a
// transaction can express) runs as a plain conditional write.
// A failed condition returns a *TxError (errors.Is ErrConditionFailed).
func (s *Store) Commit(ctx context.Context, t *Tx) error {
	switch n := len(t.writes); {
	case n == 0:
		return nil
	case n == 1 && !t.writes[0].check:
		err := s.Do(ctx, t.writes[0])
		if errors.Is(err, ErrConditionFailed) {
			return &TxError{Failed: []int{0}, failed: []*Write{t.writes[0]}, cause: err}
		}
		return err
	case n > MaxTxItems:
		return fmt.Errorf("store: transaction of %d writes exceeds %d", n, MaxTxItems)
	}
	items := make([]types.TransactWriteItem, 0, len(t.writes))
	for _, w := range t.writes {
		cond, update, names, vals, err := w.exprParts()
		if err != nil {
			return err
		}
		var ti types.TransactWriteItem
		switch {
		case w.put != nil:
			item, err := Marshal(inContext(ctx, w.put))
			if err != nil {
				return err
			}
			ti.Put = &types.Put{TableName: &s.Table, Item: item, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
		case w.delete:
			ti.Delete = &types.Delete{TableName: &s.Table, Key: w.key, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
		case w.check:
			ti.ConditionCheck = &types.ConditionCheck{TableName: &s.Table, Key: w.key, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
		default:
			ti.Update = &types.Update{TableName: &s.Table, Key: w.key, UpdateExpression: update, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
		}
		items = append(items, ti)
	}
	_, err := s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		te := &TxError{cause: err}
		for i, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" && i < len(t.writes) {
				te.Failed = append(te.Failed, i)
				te.failed = append(te.failed, t.writes[i])
			}
		}
		if len(te.Failed) > 0 {
			return te
		}
		// Without reasons (some emulators), a cancelled transaction with conditions is a conflict.
		if strings.Contains(err.Error(), "ConditionalCheckFailed") {
			te.Failed = []int{-1}
			te.unknown = true
			return te
		}
	}
	return fmt.Errorf("store: transaction of %d writes: %w", len(items), err)
}

// KeyRef names one item for BatchGet.
type KeyRef struct{ PK, SK string }

// MaxBatchGet is DynamoDB's limit of keys for one BatchGetItem call.
const MaxBatchGet = 100

// Consistency is how a read sees recent writes. Every read of the store
// states it: Get, Query on the table and BatchGet read strongly (they see
// every write that was answered before they began: compare-and-swap,
// authentication and authorization read this way), BatchGetWith takes it,
// and a Query of an index is eventual by DynamoDB's rule. An eventual read
// costs half (package doc, "Capacity") and may miss writes of the last
// second or so: it is for what tolerates that (a setting read on every
// heartbeat, the items of a list page found through an index that is itself
// eventual).
type Consistency bool

// The consistencies of a read.
const (
	Strong   Consistency = true
	Eventual Consistency = false
)

// BatchGet reads the items of refs (consistent reads), one BatchGetItem call per
// 100 distinct keys, and returns the live ones keyed by "PK|SK". Unprocessed keys
// are retried.
func (s *Store) BatchGet(ctx context.Context, refs ...KeyRef) (map[string]Item, error) {
	return s.BatchGetWith(ctx, Strong, refs...)
}

// BatchGetWith is BatchGet with the reads' consistency c.
func (s *Store) BatchGetWith(ctx context.Context, c Consistency, refs ...KeyRef) (map[string]Item, error) {
	return s.batchGetAll(ctx, c, true, refs)
}

// BatchGetPastTTL is BatchGet that also answers items past their ttl that
// DynamoDB has not deleted yet: for rows that judge their own age and must be
// rewritten whole, not made anew beside what they still hold (a rate-limit
// window, shared/ratelimit).
func (s *Store) BatchGetPastTTL(ctx context.Context, refs ...KeyRef) (map[string]Item, error) {
	return s.batchGetAll(ctx, Strong, false, refs)
}

func (s *Store) batchGetAll(ctx context.Context, c Consistency, hideExpired bool, refs []KeyRef) (map[string]Item, error) {
	out := map[string]Item{}
	keys := make([]Item, 0, len(refs))
	seen := map[string]bool{}
	for _, r := range refs {
		if !seen[r.PK+"|"+r.SK] {
			seen[r.PK+"|"+r.SK] = true
			keys = append(keys, Key(r.PK, r.SK))
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), MaxBatchGet)
		if err := s.batchGet(ctx, c, hideExpired, keys[:n], out); err != nil {
			return nil, err
		}
		keys = keys[n:]
	}
	return out, nil
}

// batchGet reads at most 100 keys into out.
func (s *Store) batchGet(ctx context.Context, c Consistency, hideExpired bool, keys []Item, out map[string]Item) error {
	req := map[string]types.KeysAndAttributes{s.Table: {Keys: keys, ConsistentRead: aws.Bool(bool(c))}}
	for attempt := 0; len(req) > 0 && attempt < 5; attempt++ {
		res, err := s.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return fmt.Errorf("store: batch get: %w", err)
		}
		for _, it := range res.Responses[s.Table] {
			if hideExpired && s.expired(it) {
				continue
			}
			pk, _ := it["PK"].(*types.AttributeValueMemberS)
			sk, _ := it["SK"].(*types.AttributeValueMemberS)
			if pk != nil && sk != nil {
				out[pk.Value+"|"+sk.Value] = it
			}
		}
		req = res.UnprocessedKeys
	}
	if len(req) > 0 {
		return fmt.Errorf("store: batch get: keys left unprocessed")
	}
	return nil
}

// Take spends the item at pk/sk and unmarshals what it held into out: a
// single-use read (challenges, one-time tokens). Of concurrent takers exactly
// one gets the item; the others, and any taker of an absent, spent or expired
// item, get ErrNotFound.
//
// It marks the item spent (attribute spent) rather than deleting it: a
// conditional delete whose answer was lost fails its condition when the SDK
// retries it, and the one taker would then be told ErrNotFound; the marking
// update carries the write token (write), so a retry of one's own take is
// recognised. A spent item stays until its TTL removes it: every item taken
// must carry one.
func (s *Store) Take(ctx context.Context, pk, sk string, out any) error {
	w := Change(pk, sk, expression.Set(expression.Name(spentAttr), expression.Value(true))).
		When(Present().And(expression.AttributeNotExists(expression.Name(spentAttr))))
	item, err := s.write(ctx, w, true)
	switch {
	case errors.Is(err, ErrConditionFailed):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("store: take %s/%s: %w", pk, sk, err)
	case len(item) == 0 || s.expired(item):
		return ErrNotFound
	}
	return Unmarshal(item, out)
}

// spentAttr marks an item Take has spent.
const spentAttr = "spent"
