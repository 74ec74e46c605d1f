// Command service-principals serves the service-principals route group as a Lambda function.
package main

import "github.com/gale-rmm/gale/shared/app"

func main() { app.RunHTTP(app.NotBuilt("service-principals")) }
