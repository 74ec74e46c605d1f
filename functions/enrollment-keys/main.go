// Command enrollment-keys serves the enrollment-keys route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/enrollmentkeysgroup"
)

func main() { app.RunHTTP(enrollmentkeysgroup.EnrollmentKeys) }
