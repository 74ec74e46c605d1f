// Command access-reviews serves the access-reviews route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/accessreviewsgroup"
)

func main() { app.RunHTTP(accessreviewsgroup.AccessReviews) }
