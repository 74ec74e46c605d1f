package policy

// Preview matches r alone against history (newest first, as the caller
// reads it): each item at its own RequestedAt, no priority shadowing, no
// software-policy bridge, enabled and verdict ignored. History holds no
// directory groups: a draft with matchAdGroup matches nothing, negated or
// not, whatever the items carry. It scans at most
// opt.MaxScanned items of opt.FlowType (Truncated when history holds more)
// and keeps the first opt.MaxSamples matches as samples. To learn whether the
// window holds more, pass one item beyond the limit. A rule referencing a
// signer group missing from groups is ErrSignerGroupMissing.
func Preview(r Rule, groups []SignerGroup, history []HistoryItem, opt PreviewOptions) (PreviewResult, error) {
	if opt.MaxScanned <= 0 {
		opt.MaxScanned = PreviewMaxScanned
	}
	if opt.MaxSamples <= 0 {
		opt.MaxSamples = PreviewMaxSamples
	}
	res := PreviewResult{StatusBreakdown: map[string]int{}, Sample: []PreviewSample{}}
	c, err := CompileRule(r, groups)
	if err != nil {
		return res, err
	}
	for i := range history {
		h := &history[i]
		if opt.FlowType != "" && h.FlowType != opt.FlowType {
			continue
		}
		if res.TotalScanned == opt.MaxScanned {
			res.Truncated = true
			break
		}
		res.TotalScanned++
		p := prepare(&h.Observation)
		p.adGroups = nil // history holds no directory groups (spec 3, "Rule preview")
		if !c.match(&p, &clock{now: h.RequestedAt}) {
			continue
		}
		res.TotalMatched++
		res.StatusBreakdown[h.Status]++
		if len(res.Sample) < opt.MaxSamples {
			res.Sample = append(res.Sample, PreviewSample{ID: h.ID, RequestedAt: h.RequestedAt, FlowType: h.FlowType, Status: h.Status})
		}
	}
	return res, nil
}
