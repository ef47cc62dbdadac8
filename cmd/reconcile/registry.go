package main

import (
	"reconcile/resources"
)

// registry builds the drivers for every supported type.
func (c *cli) registry() (resources.Registry, func(), error) {
	return resources.Registry{Drivers: map[string]resources.Driver{}, Functions: map[string]resources.Function{}}, func() {}, nil
}
