// Command enrollment-keys serves the enrollment-keys route group as a Lambda function.
package main

import "github.com/gale-rmm/gale/shared/app"

func main() { app.RunHTTP(app.NotBuilt("enrollment-keys")) }
