package device

import (
	"time"

	"github.com/gale-rmm/gale/shared/filter"
)

// View is the filter engine's view of d.
func (d *Device) View() filter.Device {
	v := filter.Device{ID: d.ID, OrgID: d.OrgID, GroupIDs: d.GroupIDs, Hostname: d.Hostname, AgentVersion: d.AgentVersion,
		OSVersion: d.OSVersion, Status: d.Status, OSType: d.OSType, Architecture: d.Architecture, DeviceRole: d.DeviceRole,
		Tags: d.Tags, CustomFields: d.CustomFields}
	v.SiteID, v.DisplayName, v.LastUser, v.OSBuild = deref(d.SiteID), deref(d.DisplayName), deref(d.LastUser), deref(d.OSBuild)
	headless := d.IsHeadless
	v.IsHeadless = &headless
	if d.UptimeSeconds != nil {
		u := float64(*d.UptimeSeconds)
		v.UptimeSeconds = &u
	}
	v.EnrolledAt = stamp(&d.EnrolledAt)
	v.LastSeenAt = stamp(d.LastSeenAt)
	h := d.Hardware
	v.Manufacturer, v.Model, v.SerialNumber, v.CPUModel, v.GPUModel = deref(h.Manufacturer), deref(h.Model), deref(h.SerialNumber), deref(h.CPUModel), deref(h.GPUModel)
	v.CPUCores, v.RAMTotalMB, v.DiskTotalGB = float(h.CPUCores), float(h.RAMTotalMb), float(h.DiskTotalGb)
	v.IPAddress, v.PublicIP, v.MACAddress = deref(d.Network.IPAddress), deref(d.Network.PublicIP), deref(d.Network.MACAddress)
	v.CPUPercent, v.RAMPercent, v.DiskPercent = d.Metrics.CPUPercent, d.Metrics.RAMPercent, d.Metrics.DiskPercent
	for _, s := range d.Software {
		v.Software = append(v.Software, s.Name)
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func float(n *int) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

func stamp(s *string) *time.Time {
	if s == nil || *s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil
	}
	return &t
}
