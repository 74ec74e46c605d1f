// Command cdk is the AWS CDK app that deploys Gale: one stack, "Gale", built from
// the route table in shared/routes. Run it through the CDK CLI from the project
// root (see cdk.json and README.md), not directly.
package main

import (
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()

	app := awscdk.NewApp(&awscdk.AppProps{Outdir: outdir()})
	// Environment-agnostic: the CLI's account and region decide where it goes.
	NewGaleStack(app, "Gale", &GaleStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("Gale RMM control plane"),
		},
	})
	app.Synth(nil)
}

// outdir returns the CLI's output directory made absolute. The CLI passes
// cdk.json's "output" as given, relative to the project root, but cdk.json runs
// this app from infra/cdk; nil leaves the choice to the CDK.
func outdir() *string {
	dir := os.Getenv("CDK_OUTDIR")
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(projectRoot(), dir)
	}
	return jsii.String(dir)
}
