package main

import (
	"context"
	"fmt"

	"github.com/felixbroker/felix/client"
)

type counterCmd struct {
	Add counterAddCmd `cmd:"" help:"Add a delta to a counter and print the sum including it (a retried add after a lost answer counts twice)."`
	Get counterGetCmd `cmd:"" help:"Print a counter's sum."`
}

type counterAddCmd struct {
	cacheArg
	Key   string `arg:"" help:"The counter's key."`
	Delta int64  `arg:"" help:"The delta, negative to subtract."`
}

func (c *counterAddCmd) Run() error {
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		v, err := ca.Counter(c.Key).Add(ctx, c.Delta)
		if err != nil {
			return err
		}
		fmt.Println(v.Sum)
		return nil
	})
}

type counterGetCmd struct {
	cacheArg
	Key string `arg:"" help:"The counter's key."`
}

func (c *counterGetCmd) Run() error {
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		v, err := ca.Counter(c.Key).Get(ctx)
		if err != nil {
			return err
		}
		if !v.Exists {
			fmt.Println("0 (never written)")
			return nil
		}
		fmt.Println(v.Sum)
		return nil
	})
}
