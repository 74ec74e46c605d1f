// Command cdk is the AWS CDK app that deploys Gale: one stack, "Gale", built from
// the route table in shared/routes. Run it through the CDK CLI from the project
// root (see cdk.json and README.md), not directly.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

func main() {
	// cdk.json runs this app from infra/cdk, but the CLI hands it paths relative
	// to the project root (CDK_OUTDIR, CDK_ERROR_FILE, CDK_PERF_COUNTERS_FILE).
	// Move there before the first jsii call starts the node kernel, so the
	// kernel and this process both resolve them as the CLI meant.
	if err := os.Chdir(projectRoot()); err != nil {
		fmt.Fprintln(os.Stderr, "gale cdk:", err)
		os.Exit(1)
	}
	defer jsii.Close()

	app := awscdk.NewApp(nil)
	// Say plainly what is missing rather than let the stack panic over it.
	distDir := resolveDistDir(app, "")
	if err := checkAssets(distDir, routes.Functions()); err != nil {
		fmt.Fprintln(os.Stderr, "gale cdk:", err)
		jsii.Close()
		os.Exit(1)
	}
	// Environment-agnostic: the CLI's account and region decide where it goes.
	NewGaleStack(app, "Gale", &GaleStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("Gale RMM control plane"),
		},
		DistDir: distDir,
	})
	app.Synth(nil)
}
