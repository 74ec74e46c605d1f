// Command sweeper is the sweeper Lambda function.
package main

import "github.com/gale-rmm/gale/shared/app/sweepergroup"

func main() { sweepergroup.Run() }
