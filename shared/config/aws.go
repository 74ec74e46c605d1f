package config

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// AWS returns the SDK configuration. With an Endpoint (moto_server, LocalStack)
// every client talks to it, with static test credentials when none are set.
func (c Config) AWS(ctx context.Context) (aws.Config, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(c.Region)}
	if c.Endpoint != "" {
		opts = append(opts,
			awsconfig.WithBaseEndpoint(c.Endpoint),
			awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("testing", "testing", "")),
		)
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("config: load aws: %w", err)
	}
	return cfg, nil
}
