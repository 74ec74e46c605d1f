package config

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// AWS returns the SDK configuration. Credentials come from the environment, as
// Lambda provides them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN); the SDK's full default chain (SSO, STS, IMDS) is not
// linked, which keeps every function binary under its size budget. With an
// Endpoint (moto_server, LocalStack) static test credentials are used when the
// environment has none.
func (c Config) AWS(ctx context.Context) (aws.Config, error) {
	id, secret, token := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
	if id == "" || secret == "" {
		if c.Endpoint == "" {
			return aws.Config{}, errors.New("config: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
		}
		id, secret, token = "testing", "testing", ""
	}
	cfg := aws.Config{
		Region:      c.Region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, token)),
	}
	if c.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(c.Endpoint)
	}
	return cfg, nil
}
