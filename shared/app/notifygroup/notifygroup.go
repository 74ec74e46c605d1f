// Package notifygroup gives a function's deps the SES and SNS notifier. Only
// the groups that send e-mail or SMS import it, so only their binaries link the
// two clients.
package notifygroup

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/notify/awsnotify"
)

// Enable builds the notifier once per process and records it in d.Notify.
func Enable(d *app.Deps) *awsnotify.Notifier {
	if n, ok := d.Notify.(*awsnotify.Notifier); ok {
		return n
	}
	n := awsnotify.New(d.AWS, d.Cfg.EmailFrom)
	d.Notify = n
	return n
}
