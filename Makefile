# Gale: `make run` serves the whole API locally; `make test` runs everything.
SHELL := /bin/bash
GO ?= go
GOFLAGS_BUILD := -trimpath -tags lambda.norpc -ldflags "-s -w -X github.com/gale-rmm/gale/shared/config.Version=$(VERSION)"
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
FUNCTIONS := $(notdir $(wildcard functions/*))
CDK := infra/cdk/node_modules/.bin/cdk

# -trimpath makes what the go command compiles and links independent of where
# the clone is: a fresh clone on a machine that built Gale before reuses its
# build cache (vet, the test binaries) instead of compiling everything again.
GOFLAGS ?= -trimpath
export GOFLAGS

GOIMPORTS_VERSION := v0.41.0
GOIMPORTS := bin/goimports-$(GOIMPORTS_VERSION)

.PHONY: deadcode-check budgets budgets-doc cost backfill run reset test build synth bench freeze-test deps client moto-check fmt-check tidy-check vet test-go test-packages test-faults test-timing test-cdk cfn-lint-check clean docs lint-openapi route-tests

## run: serve the whole API locally (infra/local). Data is kept in .local/ across
## restarts (the emulator saves its state on Ctrl-C); .local/gale.env holds settings.
## The runtime is built and exec'd rather than `go run`: go run answers Ctrl-C
## with exit status 1 even when the program stops cleanly (make: *** Error 1).
run: moto-check
	@$(GO) build -o bin/gale-local ./infra/local && exec bin/gale-local

## reset: delete the saved local data (keeping .local/gale.env), then run.
reset:
	d=$${GALE_LOCAL_DIR:-.local}; rm -f $$d/emulator.state $$d/emulator.state.tmp
	@$(MAKE) --no-print-directory run

## backfill: the sweeper's list-index-backfill job (shared/backfill) through its real handler,
## against AWS_ENDPOINT_URL (or a fresh emulator) and TABLE_NAME; see infra/cdk/README.md.
backfill:
	@ev=$$(mktemp); echo '{"job":"list-index-backfill"}' > $$ev; \
	  $(GO) run ./infra/local/invoke -function sweeper -event $$ev; rc=$$?; rm -f $$ev; exit $$rc

## test: gofmt, goimports, go mod tidy, vet, every Go test against the emulator, and the CDK assertions.
## Independent steps run side by side (-j, their output kept whole with -O) so that both
## cores work: the docs bundle first (shared/api embeds its folder, which every compile
## reads; its temporary file is written outside it), the checks together, then the Go
## packages beside the fault pass and the CDK assertions; the wall-clock measurement last,
## alone. A failing step fails make test.
test: moto-check docs
	@$(MAKE) --no-print-directory -j2 -O fmt-check tidy-check vet deadcode-check lint-openapi
	@$(MAKE) --no-print-directory -j2 -O test-packages test-faults test-cdk
	@$(MAKE) --no-print-directory test-timing

moto-check:
	@command -v moto_server >/dev/null || pip install "moto[server]==5.2.1" || \
	  { echo "moto_server is required (pip install 'moto[server]')"; exit 1; }

fmt-check: $(GOIMPORTS)
	@files=$$(find . -name '*.go' -not -path '*/node_modules/*' -not -path './cdk.out/*'); \
	  out=$$(gofmt -l $$files); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi; \
	  out=$$($(GOIMPORTS) -local github.com/gale-rmm/gale -l $$files); \
	  if [ -n "$$out" ]; then echo "goimports -local github.com/gale-rmm/gale needed:"; echo "$$out"; exit 1; fi

$(GOIMPORTS):
	@mkdir -p bin && GOBIN=$(CURDIR)/bin/tmp-goimports $(GO) install golang.org/x/tools/cmd/goimports@$(GOIMPORTS_VERSION) && \
	  mv bin/tmp-goimports/goimports $@ && rmdir bin/tmp-goimports

tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod is not tidy: run go mod tidy"; exit 1; }

vet:
	$(GO) vet ./...

# A pool of emulators (TEST_EMULATORS, shared/emulator's GALE_EMULATOR_POOL): each
# package's test process takes one no other holds, so the two packages that run at a
# time (-p 2) each have an emulator, and both cores work (an emulator serialises its
# DynamoDB requests on one core). tests/testenv gives each test its own table and
# queues. Measured on this 2-core machine, the Go packages alone: 378 s on one
# emulator, 238 s on two. A retried write that had been applied is recognised (write
# tokens, idempotent transactions: docs/maintainers.md).
# moto_atomic.py serialises DynamoDB requests so conditional writes race as in AWS.
# TEST_EMULATORS: one emulator per package running side by side (go test -p 2;
# shared/emulator's pool): each serialises its DynamoDB requests on one core.
TEST_EMULATORS ?= 2

## test-go: every Go test: the packages beside the fault pass, then the wall-clock measurements.
test-go:
	@$(MAKE) --no-print-directory -j2 -O test-packages test-faults
	@$(MAKE) --no-print-directory test-timing

test-packages:
	@set -e; $(GO) build ./... ; \
	 if [ -z "$$AWS_ENDPOINT_URL" ]; then \
	   moto="moto_server"; python3 -c 'import moto.server' 2>/dev/null && moto="python3 shared/emulator/moto_atomic.py"; \
	   pids=""; pool=""; \
	   for n in $$(seq 1 $(TEST_EMULATORS)); do \
	     port=$$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'); \
	     $$moto -H 127.0.0.1 -p $$port >/tmp/gale-moto-$$port.log 2>&1 & pids="$$pids $$!"; \
	     for i in $$(seq 1 100); do curl -sf http://127.0.0.1:$$port/moto-api/ >/dev/null && break; sleep 0.2; done; \
	     pool="$$pool http://127.0.0.1:$$port"; \
	   done; \
	   trap "kill $$pids 2>/dev/null" EXIT; \
	   export GALE_EMULATOR_POOL="$$pool"; \
	 fi; \
	 GALE_AWS_LOG_RETRIES=1 $(GO) test -p 2 -count=1 -timeout 15m ./...

# Dead code (golang.org/x/tools' deadcode): nothing even the tests do not
# reach, and what no binary reaches only as tests/deadcode.allow lists it.
DEADCODE := $(GO) run golang.org/x/tools/cmd/deadcode@v0.41.0
deadcode-check:
	@set -e; all=$$($(DEADCODE) -test ./...); \
	 if [ -n "$$all" ]; then echo "unreachable even from the tests (delete it):"; echo "$$all"; exit 1; fi; \
	 got=$$($(DEADCODE) ./functions/... ./infra/local/... | sed -E 's/:[0-9]+:[0-9]+: unreachable func: / /' | sort); \
	 want=$$(grep -v '^#' tests/deadcode.allow | awk '{print $$1" "$$2}' | sort); \
	 if [ "$$got" != "$$want" ]; then echo "deadcode differs from tests/deadcode.allow (< found, > listed):"; \
	   diff <(echo "$$got") <(echo "$$want") || true; exit 1; fi

# Capacity budgets from a run of the whole suite: every documented exchange
# records its calls and units (GALE_BUDGET_RECORD), and tests/budgetgen turns
# the most each operation consumed into tests/fixture/capacity.go.
budgets:
	rm -f /tmp/gale-budgets.tsv
	GALE_BUDGET_RECORD=/tmp/gale-budgets.tsv $(MAKE) --no-print-directory test-packages || true
	$(GO) run ./tests/budgetgen -in /tmp/gale-budgets.tsv -out tests/fixture/capacity.go
	$(MAKE) --no-print-directory budgets-doc

# docs/budgets.md, the page of every budget, from tests/fixture (budgets.go with
# the reasons beside its entries, capacity.go); TestBudgetsDocIsGenerated fails
# when the committed page differs.
budgets-doc:
	GALE_BUDGETS_DOC_WRITE=1 $(GO) test -count=1 -run '^TestBudgetsDocIsGenerated$$' ./tests/

# The cost model (tests/cost): replays a month of one device and requests of one
# API key, prices the measured units and rewrites docs/cost.md's cost section.
cost:
	GALE_COST_WRITE=1 $(GO) test -count=1 -run '^TestCostModel$$' -v ./tests/cost/ | grep -v '^=== RUN'

# Wall-clock measurements, each alone with an emulator of its own (testenv
# starts one): the local webhook retry schedule against its policy.
test-timing:
	GALE_TIMING_TEST=1 $(GO) test -count=1 -timeout 5m -run '^TestWebhookRetryScheduleThroughLocalPollers$$' ./infra/local/

# The store and the handler tests of users, API keys, enrollment, agents and
# webhooks again, against an emulator that loses the answer of 5% of applied
# writes and throttles 5% of requests (shared/emulator/moto_atomic.py's fault
# mode, seeded); the SDK gets enough attempts that no call runs out by chance,
# and waits at most 20 ms before each (the emulator throttles at random, not by
# load: the production 200 ms made this pass 2.3 times as long and tested nothing more).
FAULT_PACKAGES := ./shared/store/ ./shared/ratelimit/ ./shared/user/ ./shared/apikey/ ./shared/principal/ ./shared/keyauth/ ./shared/enrollment/ ./shared/agent/ ./shared/webhook/
test-faults:
	@set -e; pids=""; pool=""; \
	 for n in $$(seq 1 $(TEST_EMULATORS)); do \
	   port=$$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'); \
	   GALE_MOTO_DROP_P=0.05 GALE_MOTO_THROTTLE_Q=0.05 GALE_MOTO_FAULT_SEED=19 \
	     python3 shared/emulator/moto_atomic.py -H 127.0.0.1 -p $$port >/tmp/gale-moto-faults-$$port.log 2>&1 & pids="$$pids $$!"; \
	   for i in $$(seq 1 100); do curl -sf http://127.0.0.1:$$port/moto-api/ >/dev/null && break; sleep 0.2; done; \
	   pool="$$pool http://127.0.0.1:$$port"; \
	 done; \
	 trap "kill $$pids 2>/dev/null" EXIT; \
	 GALE_FAULT_MODE=1 GALE_EMULATOR_POOL="$$pool" AWS_ENDPOINT_URL= AWS_MAX_ATTEMPTS=12 AWS_MAX_BACKOFF_MS=20 $(GO) test -p $(TEST_EMULATORS) -count=1 -timeout 15m $(FAULT_PACKAGES)

test-cdk: infra/cdk/node_modules cfn-lint-check
	cd infra/cdk && GOFLAGS=-mod=mod $(GO) vet ./... && \
	  GALE_TEMPLATE_OUT=$(CURDIR)/cdk.out/test/Gale.template.json GOFLAGS=-mod=mod $(GO) test -count=1 -timeout 15m ./...
	cfn-lint --format parseable --ignore-checks W3005 -- cdk.out/test/Gale.template.json

# cfn-lint lints the template the CDK assertions synthesised (every optional part
# on); any error or warning fails, except W3005: with X-Ray on, CDK writes a
# DependsOn on each function's role beside the GetAtt that already implies it. Debian has no package of it and npm's "cfn-lint" is another, older tool,
# so it comes from the machine (this project's machines ship cfn-lint 1.51.0) or
# from pip where an index is reachable.
cfn-lint-check:
	@command -v cfn-lint >/dev/null || pip install "cfn-lint==1.51.0" || \
	  { echo "cfn-lint is required (pip install 'cfn-lint==1.51.0')"; exit 1; }

infra/cdk/node_modules: infra/cdk/package.json
	cd infra/cdk && npm ci --no-audit --no-fund && touch node_modules

## build: dist/<function>/bootstrap for every function (linux/arm64, static).
build:
	@set -e; for f in $(FUNCTIONS); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(GOFLAGS_BUILD) -o dist/$$f/bootstrap ./functions/$$f; \
	  printf "%-20s %s\n" $$f "$$(du -h dist/$$f/bootstrap | cut -f1)"; \
	done

synth: build infra/cdk/node_modules
	$(CDK) synth --quiet && ls cdk.out/*.template.json

# The issue-19 figures first (docs/features.md quotes them): the decoder's cost per
# 1 MiB hostile body, the rate limiter on one hot row, and API-key
# authentication on one key from 16 and 64 goroutines; then every other
# benchmark.
bench: moto-check
	$(GO) test -run '^$$' -bench DecodeHostile -benchmem ./shared/httpapi/
	$(GO) test -run '^$$' -bench RateLimit -benchtime 100x ./shared/ratelimit/
	$(GO) test -run '^$$' -bench KeyAuthentication -benchtime 60x ./shared/keyauth/
	$(GO) test -p 1 -run '^$$' -bench . -benchmem $$($(GO) list ./... | grep -v -x -e '.*/shared/httpapi' -e '.*/shared/ratelimit' -e '.*/shared/keyauth')

## freeze-test: the freeze-under-load experiment (70 s; see shared/emulator/freeze_test.go):
## requests arrive at 10/s, the emulator is stopped for 15 s, then the time to recover is measured.
freeze-test: moto-check
	GALE_FREEZE_TEST=1 $(GO) test -count=1 -run TestFreezeUnderLoad -v -timeout 5m ./shared/emulator/

clean:
	rm -rf dist cdk.out

# The API contract's npm tools, pinned in shared/api/_npm (package.json + package-lock.json;
# the leading _ keeps the go tool out of node_modules): the reference page's bundle
# (@scalar/api-reference) and the OpenAPI linter (@redocly/cli 2.77.0).
API_NPM := shared/api/_npm
DOCS_BUNDLE := shared/api/docs/scalar.js.gz

# --loglevel=error: @scalar/api-reference declares Node 22 and this project's machines
# run Node 20, on which the pinned bundle builds and is served as is; npm otherwise
# prints one EBADENGINE warning per package (about 190). Errors still print and fail.
$(API_NPM)/node_modules: $(API_NPM)/package.json $(API_NPM)/package-lock.json
	cd $(API_NPM) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules

## docs: the bundle GET /api/v1/docs serves (embedded in the health function; not committed).
docs: $(DOCS_BUNDLE)
build run: docs

$(DOCS_BUNDLE): $(API_NPM)/node_modules
	gzip -9 -n -c $(API_NPM)/node_modules/@scalar/api-reference/dist/browser/standalone.js > $(API_NPM)/scalar.js.gz.tmp && \
	  mv $(API_NPM)/scalar.js.gz.tmp $@

## client: regenerate the Go client (client/client.gen.go) from the assembled document;
## client's TestGeneratedClientIsCurrent fails when this was forgotten.
client:
	$(GO) generate ./client/

## route-tests: regenerate docs/route-tests.md, each documented path's tests, from the
## test sources (tests/routeindex); its TestRouteIndexIsCurrent fails when this was forgotten.
route-tests:
	$(GO) run ./tests/routeindex -out docs/route-tests.md

## lint-openapi: Redocly lints the assembled document (what /api/v1/openapi.json serves); any error or warning fails.
lint-openapi: $(API_NPM)/node_modules
	@set -e; out=$$(mktemp -d); trap "rm -rf $$out" EXIT; \
	 $(GO) run ./shared/api/cmd/openapi > $$out/openapi.json; \
	 $(API_NPM)/node_modules/.bin/redocly lint $$out/openapi.json --format=json > $$out/lint.json 2>/dev/null || true; \
	 node $(API_NPM)/lint-report.js $$out/lint.json
