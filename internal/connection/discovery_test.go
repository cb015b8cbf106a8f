package connection

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// countingDiscovery counts the reads of groups and resources, which fail
// with err when it is set, and the invalidations.
type countingDiscovery struct {
	discovery.CachedDiscoveryInterface
	reads, invalidations int
	err                  error
}

func (c *countingDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	c.reads++
	return []*metav1.APIGroup{{Name: "apps"}}, []*metav1.APIResourceList{{GroupVersion: "apps/v1"}}, c.err
}

func (c *countingDiscovery) Invalidate() { c.invalidations++ }

func TestOnceDiscovery(t *testing.T) {
	under := &countingDiscovery{}
	d := &onceDiscovery{CachedDiscoveryInterface: under}
	for range 3 {
		if groups, _, err := d.ServerGroupsAndResources(); err != nil || len(groups) != 1 {
			t.Fatalf("ServerGroupsAndResources() = %v, %v", groups, err)
		}
	}
	if under.reads != 1 {
		t.Errorf("three calls read the cache %d times, want once", under.reads)
	}
	d.Invalidate()
	if _, _, err := d.ServerGroupsAndResources(); err != nil || under.reads != 2 || under.invalidations != 1 {
		t.Errorf("after Invalidate: err %v, %d reads, %d invalidations of the cache; want nil, 2, 1", err, under.reads, under.invalidations)
	}

	// Some groups failing is kept, as the cache keeps it; a failed read
	// is asked again.
	partial := &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{{Group: "x.io", Version: "v1"}: errors.New("503")}}
	under = &countingDiscovery{err: partial}
	d = &onceDiscovery{CachedDiscoveryInterface: under}
	_, _, _ = d.ServerGroupsAndResources()
	if _, _, err := d.ServerGroupsAndResources(); !discovery.IsGroupDiscoveryFailedError(err) || under.reads != 1 {
		t.Errorf("a partial read: err %v after %d reads, want the same error from one read", err, under.reads)
	}
	under = &countingDiscovery{err: errors.New("connection refused")}
	d = &onceDiscovery{CachedDiscoveryInterface: under}
	_, _, _ = d.ServerGroupsAndResources()
	if _, _, err := d.ServerGroupsAndResources(); err == nil || under.reads != 2 {
		t.Errorf("a failed read: err %v after %d reads, want the error from two reads", err, under.reads)
	}
}
