package pam_test

// The zone database is embedded where the PAM service is wired
// (shared/app/pamgroup); these tests embed it too, so rules' time windows load
// their zones on a machine without zoneinfo.
import _ "time/tzdata"
