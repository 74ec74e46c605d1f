"""moto_server with atomic DynamoDB requests.

moto's threaded server evaluates a condition expression and applies the write in
separate steps without a lock, so two concurrent conditional writes on one key can
both succeed (seen: 2 winners of 30 compare-and-swap updates). DynamoDB never does
that. This launcher serialises DynamoDB requests (other services, such as SQS long
polls, stay concurrent) and then runs moto_server with the same arguments.

Run: python3 moto_atomic.py -H 127.0.0.1 -p 5000
"""

import sys
import threading

from moto.dynamodb.responses import DynamoHandler
from moto.server import main

_lock = threading.RLock()

# moto parses an update expression recursively, a few frames per clause: an
# UpdateItem with 190 REMOVE clauses (a rate-limit count removing expired
# slots and token sets, 1.3 KB of expression where DynamoDB takes 4 KB) ran
# out of Python's default 1,000 frames. Threads get a stack to match.
sys.setrecursionlimit(20000)
threading.stack_size(64 << 20)
_call_action = DynamoHandler.call_action


# Single-item writes are NOT replayed: DynamoDB does not make PutItem,
# UpdateItem or DeleteItem idempotent, so a retried write whose first answer
# was lost meets its own effect (a conditional write fails its condition, a
# counter counts twice). The emulator must never be kinder than DynamoDB; the
# store recognises its own writes by their write token instead.
#
# Fault mode (off by default), for tests of exactly that:
#   GALE_MOTO_DROP_P      probability that an applied write's answer is lost
#                         (the write is applied, the client gets a 500
#                         InternalServerError and retries, as after a dropped
#                         connection);
#   GALE_MOTO_THROTTLE_Q  probability that a DynamoDB request is refused with
#                         ProvisionedThroughputExceededException or
#                         ThrottlingException before it runs;
#   GALE_MOTO_FAULT_SEED  seed of the fault sequence (default 19).
import json as _json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402

_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
_DROP_P = float(os.environ.get("GALE_MOTO_DROP_P") or 0)
_THROTTLE_Q = float(os.environ.get("GALE_MOTO_THROTTLE_Q") or 0)
_faults = random.Random(int(os.environ.get("GALE_MOTO_FAULT_SEED") or 19))
fault_counts = {"dropped": 0, "throttled": 0}


def _error(status, kind, message):
    body = _json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#" + kind, "message": message})
    return status, {"Content-Type": "application/x-amz-json-1.0"}, body


# A request waits for _lock behind every other DynamoDB request. When the
# emulator stalls (a long transaction, a paused process) its clients give up
# and close their connections, and it used to run every one of those requests
# anyway once it went on, so a stall under load never drained: each request
# it ran had long been abandoned, and the live ones queued behind them. Once a
# request holds the lock, it looks at its connection first: a client that has
# closed it (end of file on a non-blocking peek) is gone, and the request is
# not run (DynamoDB cannot tell either; a client that went away cannot know
# whether its request ran, and retries it with the same tokens).
import socket as _socket  # noqa: E402

abandoned = {"skipped": 0}
_setup_class = DynamoHandler.setup_class


def _setup_class_keeping_socket(self, request, *args, **kwargs):
    environ = getattr(request, "environ", None) or {}
    self._gale_socket = environ.get("werkzeug.socket")
    return _setup_class(self, request, *args, **kwargs)


DynamoHandler.setup_class = _setup_class_keeping_socket


def _client_gone(handler):
    sock = getattr(handler, "_gale_socket", None)
    if sock is None:
        return False
    try:
        return sock.recv(1, _socket.MSG_PEEK | _socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False  # open, nothing more sent: the client waits
    except OSError:
        return True  # reset by the peer


def _atomic_call_action(self):
    with _lock:
        if _client_gone(self):
            abandoned["skipped"] += 1
            print("gale: an abandoned request was not run (%d so far)" % abandoned["skipped"], file=sys.stderr)
            return _error(500, "InternalServerError", "the client closed the connection before the request ran")
        if not (_DROP_P or _THROTTLE_Q):
            return _call_action(self)
        try:
            action = self._get_action()
        except Exception:  # noqa: BLE001 - not an operation: no faults
            return _call_action(self)
        if _THROTTLE_Q and _faults.random() < _THROTTLE_Q:
            fault_counts["throttled"] += 1
            kind = _faults.choice(["ProvisionedThroughputExceededException", "ThrottlingException"])
            return _error(400, kind, "fault mode: throttled")
        response = _call_action(self)
        if action in _WRITES and _DROP_P and isinstance(response, tuple) and response[0] == 200 \
                and _faults.random() < _DROP_P:
            fault_counts["dropped"] += 1
            return _error(500, "InternalServerError", "fault mode: the answer of an applied write was lost")
        return response


DynamoHandler.call_action = _atomic_call_action


# DynamoDB makes TransactWriteItems idempotent for 10 minutes by its
# ClientRequestToken, which the AWS SDKs fill in and keep across their retries:
# a retry of a transaction that was applied (its response lost to a dropped
# connection) succeeds without applying it again. moto ignores the token, so
# such a retry failed its own conditions. Applied transactions are remembered
# here by token (runs under _lock, like every DynamoDB request).
import hashlib  # noqa: E402
import time  # noqa: E402

from moto.dynamodb.exceptions import MockValidationException  # noqa: E402

_IDEMPOTENCY_WINDOW = 600.0
_applied = {}  # token -> (request digest, applied at)
_transact_write_items = DynamoHandler.transact_write_items


def _idempotent_transact_write_items(self):
    token = self.body.get("ClientRequestToken")
    if not token:
        return _transact_write_items(self)
    now = time.monotonic()
    for t in [t for t, (_, at) in _applied.items() if now - at > _IDEMPOTENCY_WINDOW]:
        del _applied[t]
    digest = hashlib.sha256(
        _json.dumps(self.body.get("TransactItems"), sort_keys=True, default=repr).encode()
    ).hexdigest()
    seen = _applied.get(token)
    if seen is not None:
        if seen[0] != digest:
            raise MockValidationException(
                "IdempotentParameterMismatch: the ClientRequestToken was used for another request"
            )
        return _ok()
    result = _transact_write_items(self)
    _applied[token] = (digest, now)
    return result


def _ok():
    from moto.core.responses import ActionResult

    return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})


DynamoHandler.transact_write_items = _idempotent_transact_write_items


# moto backs up a table before a transaction by deep-copying the whole of it
# (once per item of the transaction), and restores the copy when the
# transaction fails: the launcher's memory grew to 2.9 GiB on a 1,400-item
# table under load, and a transaction cost what the table held. Here a
# transaction keeps an undo log instead: before it runs, a copy of each row it
# names (at most 100), and on failure those rows are put back as they were
# (a row it created is removed). The whole-table copies are skipped.
import copy as _copy  # noqa: E402

import moto.dynamodb.models as _ddb_models  # noqa: E402
from moto.dynamodb.models.dynamo_type import DynamoType as _KeyType  # noqa: E402


class _NoTableCopy:
    def __init__(self):
        self.in_transaction = False

    def deepcopy(self, obj, memo=None):
        if self.in_transaction and isinstance(obj, _ddb_models.Table):
            return obj  # the undo log below restores what changes
        return _copy.deepcopy(obj, memo)

    def __getattr__(self, name):
        return getattr(_copy, name)


_table_copy = _NoTableCopy()
_ddb_models.copy = _table_copy
_backend_transact = _ddb_models.DynamoDBBackend.transact_write_items
undo_stats = {"transactions": 0, "rows_saved": 0, "rolled_back": 0}


def _row_key(backend, op_type, op):
    """(table, hash, range) of the row one transaction item names, or None."""
    table = backend.tables.get(op.get("TableName"))
    if table is None:
        return None
    attrs = op.get("Item") if op_type == "Put" else op.get("Key")
    try:
        hash_value = _KeyType(attrs[table.hash_key_attr])
        range_value = _KeyType(attrs[table.range_key_attr]) if table.range_key_attr else None
    except (KeyError, TypeError, AttributeError):
        return None  # the item is invalid: moto refuses it before it writes
    return table, hash_value, range_value


def _transact_with_undo_log(self, transact_items):
    undo = []
    seen = set()
    for entry in transact_items[:100]:
        try:
            op_type, op = next(iter(entry.items()))
        except (StopIteration, AttributeError):
            continue
        row = _row_key(self, op_type, op) if isinstance(op, dict) else None
        if row is None or (id(row[0]), row[1], row[2]) in seen:
            continue
        seen.add((id(row[0]), row[1], row[2]))
        table, hash_value, range_value = row
        current = table.get_item(hash_value, range_value) if (range_value is not None or not table.range_key_attr) else None
        undo.append((table, hash_value, range_value, _copy.deepcopy(current)))
    undo_stats["transactions"] += 1
    undo_stats["rows_saved"] += len(undo)
    _table_copy.in_transaction = True
    try:
        return _backend_transact(self, transact_items)
    except BaseException:
        undo_stats["rolled_back"] += 1
        for table, hash_value, range_value, saved in reversed(undo):
            if range_value is not None:
                if saved is None:
                    table.items.get(hash_value, {}).pop(range_value, None)
                else:
                    table.items[hash_value][range_value] = saved
            elif saved is None:
                table.items.pop(hash_value, None)
            else:
                table.items[hash_value] = saved
        raise
    finally:
        _table_copy.in_transaction = False


_ddb_models.DynamoDBBackend.transact_write_items = _transact_with_undo_log


# moto 5.2 encodes every answer by walking botocore's output shape member by
# member: answering a Query of 10,000 items took 5 million shape lookups and
# 85% of the request's time (profiled: a 10,000-device filter preview spent 15
# of its 17 seconds there). A read's items are already DynamoDB JSON, so the
# launcher encodes read answers with json.dumps (binary values in base64, as
# the wire format has them). Errors and every other operation keep moto's own
# serializer. The emulator tests read every attribute type back through each
# of these operations.
import base64 as _base64  # noqa: E402

from moto.dynamodb.responses import DynamoResult  # noqa: E402

_PLAIN_READS = {"Query", "Scan", "GetItem", "BatchGetItem"}
_execute_result = DynamoResult.execute_result


def _wire(value):
    if isinstance(value, _DynamoType):
        return value.to_json()
    if isinstance(value, bytes):
        return _base64.b64encode(value).decode("ascii")
    raise TypeError(f"cannot encode {type(value).__name__}")


def _plain_read_result(self, context):
    if context.operation_model.name not in _PLAIN_READS or not isinstance(self.result, dict):
        return _execute_result(self, context)
    # moto leaves an absent member (an unknown GetItem key's Item) as None;
    # its serializer omits it. Attribute values are never None (NULL is True).
    present = {k: v for k, v in self.result.items() if v is not None}
    body = _json.dumps(present, default=_wire, separators=(",", ":"))
    return 200, {"Content-Type": "application/x-amz-json-1.0"}, body


DynamoResult.execute_result = _plain_read_result


# A Query or Scan deep-copies every item of its page and sizes each item twice
# (against the 1 MB page limit); for a 10,000-device partition that was half
# of the remaining time. A read runs under _lock and its answer is encoded
# before the lock is released, so nothing can change the stored items while
# the answer is built: reads use them uncopied, and each item is sized once
# per request.
import moto.dynamodb.models.table as _ddb_table  # noqa: E402
from moto.dynamodb.models.dynamo_type import Item as _Item  # noqa: E402

_read_sizes = None  # id(item) -> size, during a read only


class _ReadsShareItems:
    def deepcopy(self, obj, memo=None):
        if _read_sizes is not None:
            return list(obj) if isinstance(obj, list) else obj
        return _copy.deepcopy(obj, memo)

    def __getattr__(self, name):
        return getattr(_copy, name)


_ddb_table.copy = _ReadsShareItems()
_item_size = _Item.size


def _sized_once(self):
    if _read_sizes is None:
        return _item_size(self)
    size = _read_sizes.get(id(self))
    if size is None:
        size = _read_sizes[id(self)] = _item_size(self)
    return size


_Item.size = _sized_once
_sharing_call_action = DynamoHandler.call_action


def _reading_call_action(self):
    global _read_sizes
    try:
        reading = self._get_action() in _PLAIN_READS
    except Exception:  # noqa: BLE001 - not an operation: no sharing
        reading = False
    if not reading:
        return _sharing_call_action(self)
    with _lock:  # re-entered by _atomic_call_action: it is an RLock
        _read_sizes = {}
        try:
            return _sharing_call_action(self)
        finally:
            _read_sizes = None


DynamoHandler.call_action = _reading_call_action


# A Query of a table lists and sorts every item of every partition before it
# picks the queried partition's items. Within a table Query, list only that
# partition (Query sorts it by range key itself).
_table_query = _ddb_table.Table.query
from moto.dynamodb.comparisons import get_comparison_func as _get_comparison_func  # noqa: E402


def _partition_query(self, hash_key, range_comparison, range_objs, limit, exclusive_start_key,
                     scan_index_forward, projection_expressions, index_name=None, *args, **kwargs):
    call = (hash_key, range_comparison, range_objs, limit, exclusive_start_key,
            scan_index_forward, projection_expressions, index_name, *args)
    if index_name:
        return _index_query(self, hash_key, index_name, call, kwargs)
    if hash_key is None or not self.range_key_attr:
        return _table_query(self, *call, **kwargs)
    items = list(self.items.get(hash_key, {}).values())
    # Query then skips the earlier pages item by item, comparing attribute
    # values: drop them here when the range keys are strings.
    start = (exclusive_start_key or {}).get(self.range_key_attr) or {}
    strings = all(i.range_key is not None and i.range_key.type == "S" for i in items)
    if "S" in start and strings:
        after = start["S"]
        if scan_index_forward is False:
            items = [i for i in items if i.range_key.value < after]
        else:
            items = [i for i in items if i.range_key.value > after]
    # Query then sizes every item it walks past, matching or not, and sorts
    # them comparing attribute values. With string keys, keep only the items
    # the key condition selects (moto's own comparison, on the plain strings)
    # in the order of those strings: Query's sort then finds them sorted, and
    # a Query of a few rows of a large partition (the PAM# rows beside 10,000
    # elevation requests) costs what it returns.
    if strings and range_comparison and range_objs and all(o.type == "S" for o in range_objs):
        test = _get_comparison_func(range_comparison)
        if test is not None:
            bounds = [o.value for o in range_objs]
            items = [i for i in items if test(i.range_key.value, *bounds)]
    if strings:
        items.sort(key=lambda i: i.range_key.value)
    self.all_items = lambda: items
    try:
        return _table_query(self, *call, **kwargs)
    finally:
        del self.all_items


def _index_query(self, hash_key, index_name, call, kwargs):
    # An index Query walks every item of the table, comparing attribute values
    # (a third of the emulator's time in the tenancy tests). Give it only the
    # items whose index partition key is the one asked for, in the order
    # all_items would: what it selects and returns is unchanged.
    index = next((i for i in self.all_indexes() if i.name == index_name), None)
    hashes = [k["AttributeName"] for k in (index.schema if index else []) if k["KeyType"] == "HASH"]
    if hash_key is None or len(hashes) != 1:
        return _table_query(self, *call, **kwargs)
    attr, kind, value = hashes[0], hash_key.type, hash_key.value
    items = []
    for part in self.items.values():
        for item in (part.values() if self.range_key_attr else [part]):
            v = item.attrs.get(attr)
            if v is not None and v.type == kind and v.value == value:
                items.append(item)
    items.sort(key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key)
    self.all_items = lambda: items
    try:
        return _table_query(self, *call, **kwargs)
    finally:
        del self.all_items


_ddb_table.Table.query = _partition_query

# Per request, moto lists its own package directory (to tell a service name
# from a host) and walks the handler class's members (to find the action's
# method): both answer the same for the life of the process.
import moto.backends as _backends  # noqa: E402
import moto.core.responses as _core_responses  # noqa: E402

_modules = tuple(_backends.list_of_moto_modules())
_backends.list_of_moto_modules = lambda: _modules
_method_names = {}
_method_names_from_class = _core_responses.method_names_from_class


def _cached_method_names(clazz):
    names = _method_names.get(clazz)
    if names is None:
        names = _method_names[clazz] = _method_names_from_class(clazz)
    return names


_core_responses.method_names_from_class = _cached_method_names

# moto builds an item attribute by attribute, summing the sizes of all the
# attributes before each one to enforce DynamoDB's 400 KB item limit: a
# quadratic walk that was the largest single cost of the emulator's CPU. Sum
# them once; an item over the limit is refused exactly as before.
from moto.dynamodb.exceptions import ItemSizeTooLarge as _ItemSizeTooLarge  # noqa: E402
from moto.dynamodb.models.dynamo_type import LimitedSizeDict as _LimitedSizeDict  # noqa: E402
from moto.dynamodb.models.utilities import bytesize as _bytesize  # noqa: E402


def _item_init(self, hash_key, range_key, attrs):
    self.hash_key = hash_key
    self.range_key = range_key
    typed = {key: _DynamoType(value) for key, value in attrs.items()}
    if sum(_bytesize(key) + value.size() for key, value in typed.items()) > 405000:
        raise _ItemSizeTooLarge
    self.attrs = _LimitedSizeDict.__new__(_LimitedSizeDict)
    dict.update(self.attrs, typed)


_Item.__init__ = _item_init

# Every answer carries a 52-character request id drawn one character at a time
# (a twentieth of the emulator's CPU); draw them in one call.
from moto.moto_api._internal.moto_random import MotoRandom as _MotoRandom  # noqa: E402
import string as _string  # noqa: E402


def _random_string(self, length=20, include_digits=True, lower_case=False):
    pool = _string.ascii_letters + (_string.digits if include_digits else "")
    s = "".join(self.choices(pool, k=length))
    return s.lower() if lower_case else s


_MotoRandom.get_random_string = _random_string

# Flask in debug mode (moto sets it) builds a class per request to explain a
# form-encoding mistake no AWS SDK makes.
import flask.debughelpers as _flask_debug  # noqa: E402

_flask_debug.attach_enctype_error_multidict = lambda request: None

# werkzeug logs every request line; the test runs and make run keep the
# emulator's output only to explain a failure, where errors (still logged)
# are what counts. GALE_MOTO_LOG=1 keeps the request lines.
if not os.environ.get("GALE_MOTO_LOG"):
    import werkzeug.serving as _serving  # noqa: E402

    _serving.WSGIRequestHandler.log_request = lambda self, *args, **kwargs: None

# A read's result is also converted to plain dictionaries, node by node,
# before it is encoded; the encoder above takes moto's attribute values as they
# are (each encodes itself), so a read skips that conversion.
import moto.dynamodb.responses as _ddb_responses  # noqa: E402
from moto.dynamodb.models.dynamo_type import DynamoType as _DynamoType  # noqa: E402

_dynamo_to_dict = _ddb_responses.dynamo_to_dict


def _to_dict_unless_reading(obj):
    return obj if _read_sizes is not None else _dynamo_to_dict(obj)


_ddb_responses.dynamo_to_dict = _to_dict_unless_reading


# moto parses "REMOVE a, b, c" as a chain of nested update expressions and
# runs two of its checks (one clause of each kind; no path updated twice) at
# every link of the chain, each over the whole rest of it: quadratic in the
# clauses. An UpdateItem removing 126 attributes took 400 ms, one removing 190
# took 1.2 s. Both checks hold for the whole expression exactly when they hold
# at its root, so they run there once.
from moto.dynamodb.parsing import validators as _validators  # noqa: E402
from moto.dynamodb.parsing.ast_nodes import UpdateExpression as _UpdateExpression  # noqa: E402


def _at_root_only(check):
    def traverse(self, node):
        if isinstance(node, _UpdateExpression):
            return getattr(self, check)(node)
        return node

    return traverse


_validators.ActionCountValidator.traverse = _at_root_only("verify_action_counts")
_validators.OverlappingPathsValidator.traverse = _at_root_only("check_for_overlapping_paths")


# /moto-api/data.json dumps every tracked object (every DynamoDB item of every
# test table), which gets slow as a test run fills the emulator. With
# ?service=ses&service=sns it dumps only those services: tests read sent e-mail
# and SMS that way.
from urllib.parse import parse_qs, urlparse  # noqa: E402

from moto.moto_api._internal.responses import MotoAPIResponse  # noqa: E402

_model_data = MotoAPIResponse.model_data


def _filtered_model_data(self, request, full_url, headers):
    wanted = parse_qs(urlparse(full_url).query).get("service")
    if not wanted:
        return _model_data(self, request, full_url, headers)
    import json

    from moto.core.model_instances import model_data

    results = {}
    for service in sorted(s for s in model_data if s in wanted):
        results[service] = {}
        for name, model in sorted(model_data[service].items()):
            rows = []
            for instance in list(model.instances_tracked):
                row = {}
                for attr in dir(instance):
                    if attr.startswith("_"):
                        continue
                    try:
                        value = getattr(instance, attr)
                        json.dumps(value)
                    except (TypeError, AttributeError, ValueError):
                        continue
                    row[attr] = value
                rows.append(row)
            results[service][name] = rows
    return 200, {"Content-Type": "application/json"}, json.dumps(results)


MotoAPIResponse.model_data = _filtered_model_data

# Capacity. moto answers ReturnConsumedCapacity with constants (1 unit a
# write, 0.5 a read), which would make every capacity budget a count of
# calls. DynamoDB bills by size, and here the launcher computes what it would
# bill from the rows themselves, by its sizing rules (shared/store's package
# doc, "Capacity", states them; store.ItemSize is the same rule in Go and
# TestEmulatorBillsLikeTheSizingRules holds the two together):
#   - an item's size is the UTF-8 bytes of its attribute names plus their
#     values (a string its bytes, a number 1 byte per two significant digits
#     plus 1, binary its bytes, a boolean or null 1, a set its members, a list
#     or map 3 bytes plus 1 per element plus the elements and map keys);
#   - a write costs one unit per started KB of the larger of the item before
#     and after (at least 1), and again for each global index whose
#     projection it changes: a new or removed index entry costs its projected
#     size, a changed key a delete plus a put, an unchanged projection
#     nothing; a transaction costs twice, a condition check included;
#   - a read costs one unit per started 4 KB (a Query or Scan: of all the
#     items it read together, those a filter dropped estimated at the size of
#     those it kept), half when eventually consistent, twice in a
#     transaction; a BatchGetItem key that is absent costs the minimum.
# Failed writes answer no capacity, as DynamoDB's errors do not; the store
# estimates them (shared/store, "Capacity").
import math as _math  # noqa: E402

from moto.utilities.aws_headers import gen_amz_crc32 as _gen_amz_crc32  # noqa: E402


def _number_size(text):
    digits = text.lstrip("+-").lower().split("e")[0].replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def _binary_size(text):
    try:
        return len(_base64.b64decode(text))
    except (ValueError, TypeError):
        return len(text)


def _value_size(value):
    (kind, v), = value.items()
    if kind == "S":
        return len(v.encode())
    if kind == "N":
        return _number_size(v)
    if kind == "B":
        return _binary_size(v)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(e.encode()) for e in v)
    if kind == "NS":
        return sum(_number_size(e) for e in v)
    if kind == "BS":
        return sum(_binary_size(e) for e in v)
    if kind == "L":
        return 3 + sum(1 + _value_size(e) for e in v)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(e) for k, e in v.items())
    return 0


def item_size(attrs):
    return sum(len(k.encode()) + _value_size(v) for k, v in (attrs or {}).items())


def _kb(size):
    return max(1, _math.ceil(size / 1024))


def _projected(table, index, attrs):
    keys = [k["AttributeName"] for k in index.schema]
    if not attrs or any(k not in attrs for k in keys):
        return None
    kind = (index.projection or {}).get("ProjectionType", "ALL")
    if kind == "ALL":
        return attrs
    names = set(keys) | {table.hash_key_attr} | ({table.range_key_attr} if table.range_key_attr else set())
    if kind == "INCLUDE":
        names |= set((index.projection or {}).get("NonKeyAttributes", []))
    return {k: v for k, v in attrs.items() if k in names}


def write_units(table, old, new):
    units = _kb(max(item_size(old), item_size(new)))
    for index in list(getattr(table, "global_indexes", []) or []):
        was, now = _projected(table, index, old), _projected(table, index, new)
        if was is None and now is None:
            continue
        keys = [k["AttributeName"] for k in index.schema]
        if was is not None and now is not None and all(was[k] == now[k] for k in keys):
            if was != now:
                units += _kb(max(item_size(was), item_size(now)))
        else:
            units += (_kb(item_size(was)) if was is not None else 0) + (_kb(item_size(now)) if now is not None else 0)
    return units


def _row(backend, table_name, attrs):
    table = backend.tables.get(table_name)
    if table is None or not isinstance(attrs, dict):
        return None
    try:
        hash_value = _KeyType(attrs[table.hash_key_attr])
        range_value = _KeyType(attrs[table.range_key_attr]) if table.range_key_attr else None
    except (KeyError, TypeError, AttributeError):
        return None
    return table, hash_value, range_value


def _row_attrs(row):
    table, hash_value, range_value = row
    try:
        item = table.get_item(hash_value, range_value)
    except Exception:  # noqa: BLE001 - absent partition
        return None
    return _copy.deepcopy(item.to_json()["Attributes"]) if item is not None else None


def _written_rows(backend, action, body):
    """(row, factor) of every row a write names."""
    rows = []
    if action == "PutItem":
        rows.append((_row(backend, body.get("TableName"), body.get("Item")), 1))
    elif action in ("UpdateItem", "DeleteItem"):
        rows.append((_row(backend, body.get("TableName"), body.get("Key")), 1))
    elif action == "TransactWriteItems":
        for entry in body.get("TransactItems") or []:
            for op_type, op in entry.items():
                attrs = op.get("Item") if op_type == "Put" else op.get("Key")
                rows.append((_row(backend, op.get("TableName"), attrs), 2))
    elif action == "BatchWriteItem":
        for table_name, requests in (body.get("RequestItems") or {}).items():
            for request in requests:
                if "PutRequest" in request:
                    rows.append((_row(backend, table_name, request["PutRequest"].get("Item")), 1))
                elif "DeleteRequest" in request:
                    rows.append((_row(backend, table_name, request["DeleteRequest"].get("Key")), 1))
    return [(r, f) for r, f in rows if r is not None]


def _read_units(size, consistent, factor=1):
    units = max(1, _math.ceil(size / 4096)) * factor
    return units if consistent else units / 2


def _read_capacity(action, body, answer):
    if action == "GetItem":
        return _read_units(item_size(answer.get("Item")), body.get("ConsistentRead", False))
    if action in ("Query", "Scan"):
        items = answer.get("Items") or []
        size = sum(item_size(i) for i in items)
        dropped = max(0, int(answer.get("ScannedCount", len(items))) - len(items))
        size += dropped * (size // len(items) if items else 1024)
        return _read_units(size, body.get("ConsistentRead", False))
    if action == "BatchGetItem":
        units = 0
        for table_name, request in (body.get("RequestItems") or {}).items():
            got = (answer.get("Responses") or {}).get(table_name) or []
            consistent = request.get("ConsistentRead", False)
            units += sum(_read_units(item_size(i), consistent) for i in got)
            units += max(0, len(request.get("Keys") or []) - len(got)) * _read_units(0, consistent)
        return units
    if action == "TransactGetItems":
        return sum(_read_units(item_size(r.get("Item")), True, 2) for r in answer.get("Responses") or [])
    return None


_READS = {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}
_unmetered_call_action = DynamoHandler.call_action


def _metered_call_action(self):
    try:
        action = self._get_action()
    except Exception:  # noqa: BLE001 - not an operation
        return _unmetered_call_action(self)
    if action not in _WRITES and action not in _READS:
        return _unmetered_call_action(self)
    with _lock:
        try:
            body = _json.loads(self.body) if isinstance(self.body, (str, bytes)) else dict(self.body or {})
        except ValueError:
            return _unmetered_call_action(self)
        wanted = body.get("ReturnConsumedCapacity", "NONE")
        if wanted not in ("TOTAL", "INDEXES"):
            return _unmetered_call_action(self)
        before = []
        if action in _WRITES:
            backend = self.dynamodb_backend
            before = [(row, factor, _row_attrs(row)) for row, factor in _written_rows(backend, action, body)]
        response = _unmetered_call_action(self)
        if not (isinstance(response, tuple) and response[0] == 200):
            return response
        status, headers, text = response
        try:
            answer = _json.loads(text or "{}")
        except ValueError:
            return response
        if action in _WRITES:
            units = sum(factor * write_units(row[0], old, _row_attrs(row)) for row, factor, old in before)
            consumed = {"TableName": body.get("TableName", ""), "CapacityUnits": units, "WriteCapacityUnits": units}
        else:
            units = _read_capacity(action, body, answer)
            consumed = {"TableName": body.get("TableName", ""), "CapacityUnits": units, "ReadCapacityUnits": units}
        value = [consumed] if action in ("BatchGetItem", "BatchWriteItem", "TransactWriteItems", "TransactGetItems") else consumed
        # Spliced into the answer's text: re-encoding a page of thousands of
        # items cost as much as answering it.
        text = text.decode() if isinstance(text, bytes) else (text or "{}")
        body_end = text.rstrip().rfind("}")
        if body_end < 0:
            return response
        sep = "," if text[:body_end].strip() not in ("{", "") else ""
        text = text[:body_end] + sep + '"ConsumedCapacity":' + _json.dumps(value, separators=(",", ":")) + text[body_end:]
        headers = dict(headers)
        _gen_amz_crc32(text, headers)  # the checksum of the answer as sent
        return status, headers, text


DynamoHandler.call_action = _metered_call_action


# Saved state (the local runtime's, never the tests': shared/emulator starts
# the launcher with GALE_MOTO_STATE only for `make run`). moto keeps
# everything in memory, so each restart of `make run` lost every user, key
# and TOTP secret. With GALE_MOTO_STATE naming a file, the launcher loads the
# DynamoDB tables and SQS queues (with their messages) from it at start, and
# writes them back on SIGTERM or SIGINT (the way shared/emulator's Stop ends
# it) and, while writes keep coming, every GALE_MOTO_SAVE_EVERY seconds
# (default 10): a launcher killed outright loses at most those seconds. The
# file is written whole beside its place and renamed over it, so a crash mid
# save leaves the previous state. A file that cannot be loaded (another moto
# version, a damaged file) stops the launcher with exit status 3 rather than
# serving empty tables that a later save would write over it.
import copyreg  # noqa: E402
import pickle  # noqa: E402

import moto.server as _server  # noqa: E402
from moto.dynamodb.models import dynamodb_backends as _dynamodb_backends  # noqa: E402
from moto.sqs.models import sqs_backends as _sqs_backends  # noqa: E402

_STATE = os.environ.get("GALE_MOTO_STATE") or ""
_STATE_VERSION = 1
_dirty = threading.Event()  # a DynamoDB write since the last save
_save_lock = threading.Lock()  # one save at a time: they share the temporary file
# A queue's lock is rebuilt on load: a lock cannot be pickled, and none is
# held once the state is being saved.
copyreg.pickle(threading.Condition, lambda c: (threading.Condition, ()))


def _collections():
    """(service, backend dict, attribute holding what is saved) per service."""
    return [("dynamodb", _dynamodb_backends, "tables"), ("sqs", _sqs_backends, "queues")]


def _pickled(state):
    # SQS requests are not serialised: one that changes a queue while it is
    # pickled makes pickle fail ("changed size during iteration"); the next
    # attempt finds it done.
    for attempt in range(20):
        try:
            for service, backends, attr in _collections():
                state[service] = {acct: {region: dict(getattr(b, attr)) for region, b in list(regional.items())}
                                  for acct, regional in list(backends.items())}
            return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        except RuntimeError:
            if attempt == 19:
                raise
            time.sleep(0.01)


def save_state(path):
    import moto

    state = {"version": _STATE_VERSION, "moto": moto.__version__}
    with _save_lock:
        with _lock:  # no DynamoDB request runs while the tables are copied
            data = _pickled(state)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def load_state(path):
    import moto

    with open(path, "rb") as f:
        state = pickle.load(f)
    if state.get("version") != _STATE_VERSION or state.get("moto") != moto.__version__:
        raise ValueError("saved by moto %s (format %s); this is moto %s" % (
            state.get("moto"), state.get("version"), moto.__version__))
    for service, backends, attr in _collections():
        for acct, regional in (state.get(service) or {}).items():
            for region, saved in regional.items():
                getattr(backends[acct][region], attr).update(saved)


_written_call_action = DynamoHandler.call_action


def _marking_call_action(self):
    try:
        write = self._get_action() in _WRITES
    except Exception:  # noqa: BLE001 - not an operation
        write = False
    response = _written_call_action(self)
    if write:
        _dirty.set()
    return response


def _save_while_dirty(path, every):
    while True:
        time.sleep(every)
        if _dirty.is_set():
            _dirty.clear()
            try:
                save_state(path)
            except Exception as e:  # noqa: BLE001 - the next round or the stop saves again
                _dirty.set()
                print("gale: saving %s failed: %s" % (path, e), file=sys.stderr)


def _save_and_exit(signum, frame):
    # The DynamoDB lock is held to the exit: a write answered after the save
    # would be lost without its client knowing.
    _lock.acquire()
    try:
        save_state(_STATE)
        print("gale: saved the emulator's state to %s" % _STATE, file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - reported; the exit status tells the caller
        print("gale: saving %s failed: %s" % (_STATE, e), file=sys.stderr)
        os._exit(4)
    os._exit(0)


def _persist():
    if os.path.exists(_STATE):
        try:
            load_state(_STATE)
        except Exception as e:  # noqa: BLE001 - any failure: refuse to start
            print("gale: cannot load the saved state %s: %s; `make reset` starts clean" % (_STATE, e), file=sys.stderr)
            sys.exit(3)
        print("gale: loaded the emulator's state from %s" % _STATE, file=sys.stderr)
    DynamoHandler.call_action = _marking_call_action
    # moto.server installs its handler for both signals when main starts.
    _server.signal_handler = _save_and_exit
    every = float(os.environ.get("GALE_MOTO_SAVE_EVERY") or 10)
    threading.Thread(target=_save_while_dirty, args=(_STATE, every), daemon=True).start()


if __name__ == "__main__":
    if _STATE:
        _persist()
    sys.exit(main(sys.argv[1:]))
