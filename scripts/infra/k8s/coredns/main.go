// CoreDNS with only the plugins the cluster's Corefile uses (addons/coredns.yaml), built in this
// module so that it shares the compiled client-go and apimachinery of the Kubernetes commands. The
// release binary carries every plugin, the clouds' SDKs among them, which costs minutes of compiling
// on a fresh machine for code a one-node cluster never runs. This is CoreDNS's documented way to
// build with a chosen set of plugins: import coremain and the plugins, and name the directives.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// In the order of CoreDNS's plugin.cfg (core/dnsserver/zdirectives.go), which is the order a query
// passes through them, whatever the order in the Corefile.
var directives = []string{
	"reload",
	"ready",
	"health",
	"prometheus",
	"errors",
	"loadbalance",
	"cache",
	"kubernetes",
	"loop",
}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
