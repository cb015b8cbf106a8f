package connection

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// onceDiscovery is a cluster's cached discovery client that reads the
// groups and their resources once until invalidated. kubectl's RESTMapper
// reads them for its mappings and its shortcut expander again, and the
// disk cache decodes the file of every group version each time: start-up
// paid that twice. Freshness is the cache's (Fresh), so a type unknown to
// a stale cache still has the cache invalidated and read from the server.
// A read that fails (other than some groups failing, which the cache also
// keeps) is not kept: the next call asks again.
type onceDiscovery struct {
	discovery.CachedDiscoveryInterface

	// mu guards the fields below.
	mu        sync.Mutex
	read      bool
	groups    []*metav1.APIGroup
	resources []*metav1.APIResourceList
	err       error
}

// ServerGroupsAndResources returns the first read's answer until
// Invalidate.
func (d *onceDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.read {
		groups, resources, err := d.CachedDiscoveryInterface.ServerGroupsAndResources()
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			return groups, resources, err
		}
		d.read, d.groups, d.resources, d.err = true, groups, resources, err
	}
	return d.groups, d.resources, d.err
}

// Invalidate forgets what was read, here and in the cache underneath.
func (d *onceDiscovery) Invalidate() {
	d.mu.Lock()
	d.read, d.groups, d.resources, d.err = false, nil, nil, nil
	d.mu.Unlock()
	d.CachedDiscoveryInterface.Invalidate()
}
