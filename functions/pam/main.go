// Command pam serves the pam route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
)

func main() { app.RunHTTP(pamgroup.PAM) }
