package device_test

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
)

// The partition-heat model (issue 32, item 4): a fleet of 1,000,000 devices
// over 5,000 organizations (one of 100,000, the rest about 180 each) polling
// at the interval the server tells (device.NextInterval: 60 s +-10%, no
// channel: the worst case; with a channel open a steady device writes
// nothing), each heartbeat planned by the real rule (device.PlanBeat) and its
// writes put on the partitions of the real key functions: the device row on
// its organization's ORG# partition, the digest on the device's AGENT#
// partition, a last-seen move (delete + put, keys only) on its SEEN# shard
// of GSI5. Simulated time, no I/O: pure computation.
const (
	heatDevices = 1_000_000
	heatOrgs    = 5_000
	heatBigOrg  = 100_000
	// heatMeasure is one full bucket cycle: every steady device writes once.
	heatMeasure = device.SeenBucket
)

// heat is the model's answer: the hottest second of any partition, in write
// units, on the table (ORG# and AGENT# partitions) and on GSI5.
type heat struct {
	tableWCU, bigOrgMeanWCU, agentWCU, seenWCU, seenMeanWCU float64
	deviceWRU, agentWRU                                     int
}

// described is a Windows device as agents describe it, for its row's size.
// described is a fully described Windows device's rows: its device row (the
// described record), its live row and its agent row.
func described() (store.Item, store.Item, store.Item) {
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	up := int64(864000)
	id := uuid.NewString()
	d := &device.Device{ID: id, OrgID: uuid.NewString(), PartnerID: uuid.NewString(), SiteID: s(uuid.NewString()), GroupIDs: []string{uuid.NewString()},
		Hostname: "ACME-LT-04417", DisplayName: s("Front desk laptop"), OSType: "windows", OSVersion: "Windows 11 Pro 23H2",
		OSBuild: s("10.0.22631.4317"), Architecture: "x64", AgentVersion: "1.8.2", Status: device.StatusOnline, DeviceRole: "workstation",
		LastUser: s(`ACME\jane.doe`), UptimeSeconds: &up, EnrolledAt: "2026-03-02T10:11:12.000Z", LastSeenAt: s("2026-11-01T09:00:00.000Z"),
		Tags: []string{"finance", "hq"}, CustomFields: map[string]string{"assetTag": "A-33810"},
		Hardware: device.Hardware{Manufacturer: s("Dell Inc."), Model: s("Latitude 5440"), SerialNumber: s("7XK2QL3"),
			CPUModel: s("13th Gen Intel(R) Core(TM) i7-1365U"), CPUCores: n(10), RAMTotalMb: n(32768), DiskTotalGb: n(512), GPUModel: s("Intel(R) Iris(R) Xe Graphics")},
		Network:      device.Network{IPAddress: s("10.20.30.41"), PublicIP: s("203.0.113.77"), MACAddress: s("3C:52:82:1A:2B:3C")},
		Metrics:      device.Metrics{CPUPercent: f(12.5), RAMPercent: f(61.2), DiskPercent: f(70.4)},
		HealthStatus: "ok", SoftwareCount: 214, SoftwareHash: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", SoftwareChunks: 1,
		UpdatedAt: "2026-11-01T09:00:00.000Z", GroupID: uuid.NewString(), SeenPK: device.SeenPK(id), SeenSK: device.SeenSK(id, time.Now())}
	d.Keys = device.Keys(d.OrgID, d.ID)
	device.SetListKeys(d)
	live := device.Split(d)
	a := &device.Agent{Keys: store.Keys{PK: device.AgentKey(id).PK, SK: "AGENT"}, DeviceID: id, OrgID: d.OrgID, PartnerID: d.PartnerID,
		SiteID: d.SiteID, GroupID: d.GroupID, TokenHash: strings.Repeat("ab", 32), Status: device.StatusOnline, Commands: map[string]device.Command{},
		BeatFacts: "0123456789abcdef", BeatBands: "1.6.7", BeatBucket: "2026-11-01T09:00:00Z", SeenKey: d.SeenSK,
		WriteWin: "2026-11-01T09:00Z", Writes: 1, Live: true}
	di, err := store.Marshal(d)
	if err != nil {
		panic(err)
	}
	li, err := store.Marshal(live)
	if err != nil {
		panic(err)
	}
	ai, err := store.Marshal(a)
	if err != nil {
		panic(err)
	}
	// The write token every single-item write leaves (shared/store).
	tok := &types.AttributeValueMemberS{Value: "AAAAAAAAAAAAAAAA"}
	di[store.TokenAttr], li[store.TokenAttr], ai[store.TokenAttr] = tok, tok, tok
	return di, li, ai
}

func partitionHeat() heat {
	_, li, ai := described()
	devWRU, agentWRU := rowWRU(li), rowWRU(ai) // a heartbeat writes the live row
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	secs := int(heatMeasure / time.Second)
	workers := runtime.GOMAXPROCS(0)
	type counts struct {
		org   [][]int32 // [org][second] writes
		seen  [][]int32 // [shard][second] index writes
		agent int32     // the most writes of one device's agent row in a second
	}
	parts := make([]counts, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := counts{org: make([][]int32, heatOrgs), seen: make([][]int32, device.SeenShards)}
			for i := range c.org {
				c.org[i] = make([]int32, secs)
			}
			for i := range c.seen {
				c.seen[i] = make([]int32, secs)
			}
			mx := device.Metrics{CPUPercent: new(float64), RAMPercent: new(float64), DiskPercent: new(float64)}
			*mx.CPUPercent, *mx.RAMPercent, *mx.DiskPercent = 12.5, 61.2, 70.4
			user := `ACME\jane.doe`
			for i := w; i < heatDevices; i += workers {
				rng := rand.New(rand.NewPCG(uint64(i), 32)) // per device: the same fleet whatever the workers
				var raw [16]byte
				for j := range raw {
					raw[j] = byte(rng.Uint32())
				}
				raw[6], raw[8] = raw[6]&0x0f|0x40, raw[8]&0x3f|0x80
				id := uuid.UUID(raw).String()
				org := 0
				if i >= heatBigOrg {
					org = 1 + (i-heatBigOrg)%(heatOrgs-1)
				}
				shard, _ := strconv.Atoi(strings.TrimPrefix(device.SeenPK(id), "SEEN#"))
				a := &device.Agent{DeviceID: id, Status: device.StatusOnline, Live: true}
				b := device.Beat{Health: "ok", AgentVersion: "1.8.2", Metrics: &mx, LastUser: &user}
				last := -1
				// A steady device: the digest holds the bucket of its
				// previous heartbeat (the first heartbeat of each bucket
				// writes it), an interval before a random phase.
				start := t0.Add(-time.Duration(rng.Int64N(int64(device.HeartbeatInterval))))
				b.At = start.Add(-device.HeartbeatInterval)
				p := device.PlanBeat(a, b, device.StatusOnline, false)
				a.BeatFacts, a.BeatBands, a.BeatBucket, a.SeenKey = p.Facts, p.Bands, p.Bucket, p.Seen
				for t := start; t.Before(t0.Add(heatMeasure)); t = t.Add(device.NextInterval(id, t, false)) {
					b.At = t
					p := device.PlanBeat(a, b, device.StatusOnline, false)
					if !p.Write {
						continue
					}
					if !t.Before(t0) {
						sec := int(t.Sub(t0) / time.Second)
						c.org[org][sec]++
						if p.Seen != a.SeenKey {
							c.seen[shard][sec] += 2 // the old key's delete, the new key's put
						}
						if sec == last {
							c.agent = max(c.agent, 2)
						} else {
							c.agent = max(c.agent, 1)
						}
						last = sec
					}
					a.BeatFacts, a.BeatBands, a.BeatBucket = p.Facts, p.Bands, p.Bucket
					if p.Seen != "" {
						a.SeenKey = p.Seen
					}
				}
			}
			parts[w] = c
		}()
	}
	wg.Wait()
	h := heat{deviceWRU: devWRU, agentWRU: agentWRU}
	var bigTotal, seenTotal int64
	for o := range heatOrgs {
		for s := range secs {
			var n int32
			for _, c := range parts {
				n += c.org[o][s]
			}
			h.tableWCU = max(h.tableWCU, float64(n)*float64(devWRU))
			if o == 0 {
				bigTotal += int64(n)
			}
		}
	}
	for sh := range device.SeenShards {
		for s := range secs {
			var n int32
			for _, c := range parts {
				n += c.seen[sh][s]
			}
			h.seenWCU = max(h.seenWCU, float64(n)) // keys-only entries: 1 WCU each
			seenTotal += int64(n)
		}
	}
	for _, c := range parts {
		h.agentWCU = max(h.agentWCU, float64(c.agent)*float64(agentWRU))
	}
	h.bigOrgMeanWCU = float64(bigTotal) * float64(devWRU) / float64(secs)
	h.seenMeanWCU = float64(seenTotal) / float64(secs) / device.SeenShards
	return h
}

// TestTheRowAHeartbeatWritesFitsOneWriteUnit: a fully described Windows
// device's described record takes two write units, and the live row its
// heartbeats write (everything a heartbeat moves but the facts) stays under
// 1 KB, whatever the device describes.
func TestTheRowAHeartbeatWritesFitsOneWriteUnit(t *testing.T) {
	di, li, _ := described()
	t.Logf("device row %d bytes, live row %d bytes", store.ItemSize(di), store.ItemSize(li))
	if n := store.ItemSize(li); n > 1024 {
		t.Fatalf("live row of %d bytes: over 1 KB", n)
	}
	if rowWRU(di) < 2 {
		t.Fatalf("the described device is %d bytes: the test no longer describes a device past 1 KB", store.ItemSize(di))
	}
	for _, attr := range []string{"lastSeenAt", "mx", "uptimeSeconds", "GSI5PK", "GSI5SK"} {
		if v, ok := di[attr]; ok {
			if m, isMap := v.(*types.AttributeValueMemberM); !isMap || len(m.Value) > 0 {
				t.Errorf("the device row holds %s: the live row's", attr)
			}
		}
		if _, ok := li[attr]; !ok {
			t.Errorf("the live row lacks %s", attr)
		}
	}
}

// TestPartitionHeat asserts the model's hottest partition stays under
// DynamoDB's 1,000 WCU/s per partition on the table and on GSI5.
func TestPartitionHeat(t *testing.T) {
	h := partitionHeat()
	t.Logf("live row %d WRU, agent row %d WRU; hottest second: table %.0f WCU/s (the 100,000-device organization's ORG# partition; its mean %.0f), agent row %.0f, GSI5 shard %.0f (mean %.0f)",
		h.deviceWRU, h.agentWRU, h.tableWCU, h.bigOrgMeanWCU, h.agentWCU, h.seenWCU, h.seenMeanWCU)
	if h.tableWCU >= 1000 || h.seenWCU >= 1000 || h.agentWCU >= 1000 {
		t.Fatalf("a partition above 1,000 WCU/s: %+v", h)
	}
}

// BenchmarkPartitionHeat reports the model's hottest partitions.
// Run: go test -run '^$' -bench PartitionHeat -benchtime 1x ./shared/device/
func BenchmarkPartitionHeat(b *testing.B) {
	var h heat
	for b.Loop() {
		h = partitionHeat()
	}
	b.ReportMetric(h.tableWCU, "hottest_partition_wps")
	b.ReportMetric(h.seenWCU, "hottest_gsi5_partition_wps")
	b.ReportMetric(h.bigOrgMeanWCU, "org100k_mean_wps")
}

// rowWRU is what writing item costs on the table alone (shared/store, "Capacity").
func rowWRU(item store.Item) int { n := store.ItemSize(item); return store.WriteUnits(n, n) }
