package etcdtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// readyTimeout bounds the wait for a member to be ready: long, for a
// loaded machine, and only ever reached when something is broken.
const readyTimeout = 2 * time.Minute

// Member is one etcd member started by StartCluster or StartTLS.
type Member struct {
	// Name is the member's name in its cluster, e.g. "m0".
	Name string
	// Endpoint is the host:port of its client URL on loopback.
	Endpoint string

	etcd     *embed.Etcd
	stopOnce sync.Once
}

// Stop stops the member, at once, as a crash of its host would from the
// cluster's point of view. Stopping a stopped member does nothing.
func (m *Member) Stop() {
	m.stopOnce.Do(m.etcd.Close)
}

// Stopped returns a channel closed once the member has stopped.
func (m *Member) Stopped() <-chan struct{} { return m.etcd.Server.StopNotify() }

// IsLeader reports whether the member is its cluster's raft leader now.
func (m *Member) IsLeader() bool {
	select {
	case <-m.Stopped():
		return false
	default:
	}
	return m.etcd.Server.Leader() == m.etcd.Server.MemberID()
}

// LeaderChanged returns a channel closed when the member next sees the
// leader change (or lose its leader).
func (m *Member) LeaderChanged() <-chan struct{} { return m.etcd.Server.LeaderChangedNotify() }

// Start starts a one-member etcd cluster for tb and returns its client
// endpoint, as host:port. The member is stopped when tb ends.
func Start(tb testing.TB) []string {
	tb.Helper()
	return []string{StartCluster(tb, 1)[0].Endpoint}
}

// StartCluster starts an etcd cluster of n members for tb and returns them
// once every member is ready. They are stopped when tb ends.
func StartCluster(tb testing.TB, n int) []*Member {
	tb.Helper()
	return startClusterRetry(tb, n, nil)
}

// startClusterRetry starts a cluster of n members, serving clients over
// TLS as clientTLS says if it is not nil.
func startClusterRetry(tb testing.TB, n int, clientTLS *transport.TLSInfo) []*Member {
	tb.Helper()
	var lastErr error
	// A free port found may be taken by another test before etcd binds
	// it: try again with new ports.
	for range 5 {
		ms, err := startCluster(tb, n, clientTLS)
		if err == nil {
			return ms
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	tb.Fatalf("start etcd cluster of %d: %v", n, lastErr)
	return nil
}

// startCluster makes one attempt at startClusterRetry.
func startCluster(tb testing.TB, n int, clientTLS *transport.TLSInfo) ([]*Member, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	token := fmt.Sprintf("reconcile-test-%d", ports[0])
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	var ms []*Member
	stopAll := func() {
		for _, m := range ms {
			m.Stop()
		}
	}
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = tb.TempDir()
		client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])}
		if clientTLS != nil {
			client.Scheme = "https"
			cfg.ClientTLSInfo = *clientTLS
		}
		peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = token
		cfg.ClusterState = embed.ClusterStateFlagNew
		cfg.EnableGRPCGateway = false
		cfg.ListenMetricsUrls = nil
		cfg.Logger = "zap"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		// The cheapest password hashing etcd allows: at the default cost,
		// each authentication takes long enough, on a loaded machine and
		// under the race detector, to time out a client's dial.
		cfg.BcryptCost = 4
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			stopAll()
			return nil, err
		}
		ms = append(ms, &Member{Name: cfg.Name, Endpoint: client.Host, etcd: e})
	}
	tb.Cleanup(stopAll)
	timeout := time.After(readyTimeout)
	for _, m := range ms {
		select {
		case <-m.etcd.Server.ReadyNotify():
		case err := <-m.etcd.Err():
			stopAll()
			return nil, fmt.Errorf("member %s: %w", m.Name, err)
		case <-timeout:
			stopAll()
			return nil, errors.New("members not ready in time")
		}
	}
	return ms, nil
}

// freePorts returns n distinct TCP ports free on loopback now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
