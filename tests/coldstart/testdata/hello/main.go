// Command hello is the yardstick of BenchmarkColdStart: the smallest
// aws-lambda-go function, built with the same flags as Gale's functions.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, map[string]any) (string, error) { return "hello", nil })
}
