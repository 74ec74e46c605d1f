package policy

// The zone database is embedded where the PAM service is wired
// (shared/app/pamgroup), not in this package; its tests embed it themselves so
// they load the same zones on a machine without zoneinfo.
import _ "time/tzdata"
