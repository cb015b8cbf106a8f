package rawobj

import (
	"fmt"
	"strings"
)

// configMapJSON is a ~800-byte ConfigMap as the API server sends it, with
// two managedFields entries. i varies the name, uid and resourceVersion.
func configMapJSON(i int, withTypeMeta bool) string {
	tm := ""
	if withTypeMeta {
		tm = `"kind":"ConfigMap","apiVersion":"v1",`
	}
	return fmt.Sprintf(`{%s"metadata":{"name":"app-config-%05d","namespace":"default","uid":"6a1c2f3e-8d4b-4c1a-9e2f-%012d","resourceVersion":"%d","creationTimestamp":"2024-05-01T12:00:00Z","labels":{"app":"demo","tier":"backend"},"annotations":{"owner":"team-a"},"managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","time":"2024-05-01T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:config.yaml":{},"f:key":{}},"f:metadata":{"f:annotations":{".":{},"f:owner":{}},"f:labels":{".":{},"f:app":{},"f:tier":{}}}}},{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2024-05-02T08:30:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:extra":{}}}}]},"data":{"config.yaml":"server:\n  port: 8080\n  host: 0.0.0.0\n","key":"value","extra":"some extra data here, with \"quotes\" and {braces}"}}`,
		tm, i, i, 100000+i)
}

// listJSON is a ConfigMapList of n configMapJSON items without apiVersion
// and kind, as the API server sends it.
func listJSON(n int, cont string) string {
	var b strings.Builder
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"999999"`)
	if cont != "" {
		fmt.Fprintf(&b, `,"continue":%q,"remainingItemCount":42`, cont)
	}
	b.WriteString(`},"items":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(configMapJSON(i, false))
	}
	b.WriteString("]}")
	return b.String()
}

const secretJSON = `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"db-credentials","namespace":"prod","uid":"0b7d5c3a-1e90-4c1a-9e2f-6a1c2f3e8d4b","resourceVersion":"77","creationTimestamp":"2023-11-30T23:59:59Z","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"db","uid":"x","controller":true}],"managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":"2023-11-30T23:59:59Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:password":{},"f:username":{}},"f:type":{}}}]},"data":{"password":"czNjcjN0","username":"YWRtaW4="},"type":"Opaque"}`

const podJSON = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-7d4b9c8f6-x2x9k","generateName":"web-7d4b9c8f6-","namespace":"shop","uid":"e3b0c442-98fc-1c14-9afb-f4c8996fb924","resourceVersion":"5012345","generation":3,"creationTimestamp":"2024-02-29T10:11:12Z","deletionTimestamp":"2024-03-01T00:00:00Z","deletionGracePeriodSeconds":30,"labels":{"app":"web","pod-template-hash":"7d4b9c8f6"},"annotations":{"kubectl.kubernetes.io/restartedAt":"2024-02-29T10:00:00Z"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c8f6","uid":"1","controller":true,"blockOwnerDeletion":true}],"finalizers":["example.com/cleanup"],"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2024-02-29T10:11:12Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"1\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}},{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2024-02-29T10:11:20Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{}}},"f:podIP":{}}},"subresource":"status"},{"manager":"example-controller","operation":"Apply","apiVersion":"v1","time":"2024-02-29T10:12:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{"v:\"example.com/cleanup\"":{}}}}}]},"spec":{"containers":[{"name":"web","image":"nginx:1.25","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"}}}],"nodeName":"node-1","restartPolicy":"Always"},"status":{"phase":"Running","podIP":"10.0.0.7","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2024-02-29T10:11:20Z"}]}}`

const namespaceJSON = `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system","uid":"9f86d081-884c-7d65-9a2f-eaa0c55ad015","resourceVersion":"4","creationTimestamp":"2023-01-01T00:00:00Z","labels":{"kubernetes.io/metadata.name":"kube-system"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`

// Escapes and unicode in the name, namespace and annotations; escaped keys.
const escapedJSON = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"caf\u00e9-\/x\"y\\z-😀-\ud83d\ude00","namespace":"ns\u002d1","uid":"\u0075id","resourceVersion":"1\u0032","annotations":{"note":"a\nb","k8s.io\/initial-events-end":"tr\u0075e"},"managedFields":[{"manager":"m\u00fcller","operation":"Upd\u0061te","time":"2024-01-01T00:00:00Z"}]},"data":{"k":"v"}}`

// Nested metadata keys inside data and spec that must not be taken for the
// top-level metadata, which comes last.
const nestedMetadataJSON = `{"data":{"metadata":"{\"name\":\"wrong\"}","name":"wrong"},"spec":{"template":{"metadata":{"name":"wrong","namespace":"wrong","managedFields":[{"manager":"wrong"}],"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{}},"metadata":{"name":"wrong"}},"kind":"Deployment","apiVersion":"apps/v1","metadata":{"namespace":"apps","annotations":{"x":"{\"metadata\":{\"name\":\"wrong\"}}"},"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:name":{}}}}],"name":"right","uid":"u","resourceVersion":"9","generation":12}}`

// prettyPodJSON is a pretty-printed object whose managedFields is neither
// first nor last in metadata.
const prettyJSON = `
  {
    "apiVersion" : "v1",
    "kind" : "ConfigMap",
    "metadata" : {
      "name" : "pretty",
      "namespace" : "default",
      "managedFields" : [
        {
          "manager" : "kubectl",
          "operation" : "Apply",
          "time" : "2024-01-01T00:00:00Z",
          "fieldsType" : "FieldsV1",
          "fieldsV1" : { "f:data" : { } }
        }
      ],
      "resourceVersion" : "3"
    },
    "data" : { "a" : "b" }
  }
`

// bookmarkJSON is the object of the BOOKMARK that ends a watch-list's
// initial events.
const bookmarkJSON = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12345","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}`
