package controlplane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// etcdHeader is the response header of etcd's JSON gRPC gateway. int64 fields
// are JSON strings there; json.Number accepts both forms.
type etcdHeader struct {
	Header struct {
		Revision json.Number `json:"revision"`
	} `json:"header"`
}

// CompactEtcd compacts etcd at its current revision (physically, so the old
// revisions are really gone when it returns) and returns that revision.
// Watches and lists at older resourceVersions then fail with 410 Gone once
// they reach etcd. It talks to etcd's JSON gRPC gateway; compacting again
// when nothing was written since is not an error.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (int64, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	rangeReq := fmt.Sprintf(`{"key":%q,"count_only":true}`, base64.StdEncoding.EncodeToString([]byte("/registry/")))
	status, body, err := do(ctx, client, http.MethodPost, cp.EtcdURL()+"/v3/kv/range", "", rangeReq)
	if err != nil {
		return 0, fmt.Errorf("compact etcd: read current revision: %w", err)
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("compact etcd: read current revision: status %d: %s", status, truncate(body))
	}
	var hdr etcdHeader
	if err := json.Unmarshal([]byte(body), &hdr); err != nil {
		return 0, fmt.Errorf("compact etcd: decode range response: %w", err)
	}
	rev, err := strconv.ParseInt(hdr.Header.Revision.String(), 10, 64)
	if err != nil || rev <= 0 {
		return 0, fmt.Errorf("compact etcd: no revision in range response %s", truncate(body))
	}

	compactReq := fmt.Sprintf(`{"revision":"%d","physical":true}`, rev)
	status, body, err = do(ctx, client, http.MethodPost, cp.EtcdURL()+"/v3/kv/compaction", "", compactReq)
	if err != nil {
		return 0, fmt.Errorf("compact etcd at revision %d: %w", rev, err)
	}
	if status != http.StatusOK {
		if strings.Contains(body, "required revision has been compacted") {
			// Already compacted at this revision (nothing written since).
			return rev, nil
		}
		return 0, fmt.Errorf("compact etcd at revision %d: status %d: %s", rev, status, truncate(body))
	}
	cp.logf("etcd compacted at revision %d", rev)
	return rev, nil
}

// AdvanceEtcdRevision writes a key outside /registry/ (no API server reads
// it), so that etcd's revision moves past every resourceVersion handed out
// so far; a compaction after it then invalidates them all. It works while
// kube-apiserver is down, which no write through the API can.
func (cp *ControlPlane) AdvanceEtcdRevision(ctx context.Context) error {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req := fmt.Sprintf(`{"key":%q,"value":%q}`,
		base64.StdEncoding.EncodeToString([]byte("/deltas-test/revision")),
		base64.StdEncoding.EncodeToString([]byte("bump")))
	status, body, err := do(ctx, client, http.MethodPost, cp.EtcdURL()+"/v3/kv/put", "", req)
	if err != nil {
		return fmt.Errorf("advance etcd's revision: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("advance etcd's revision: status %d: %s", status, truncate(body))
	}
	return nil
}
