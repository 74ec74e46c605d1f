// Command audit-logs serves the audit-logs route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/auditlogsgroup"
)

func main() { app.RunHTTP(auditlogsgroup.AuditLogs) }
