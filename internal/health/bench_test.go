package health

import "testing"

// benchPod is a running Pod of a Deployment as the busy cluster's
// controllers and kwok leave it.
const benchPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7665494998-p5cws","generateName":"web-7665494998-","namespace":"demo","uid":"0b7f8a4c-58a4-4a0e-9a43-3b7c7e8f0a11","resourceVersion":"31415","creationTimestamp":"2026-11-25T06:00:00Z","labels":{"app":"web","pod-template-hash":"7665494998"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7665494998","uid":"1b5c0f4e-5f0e-4bb4-9a43-3b7c7e8f0a11","controller":true,"blockOwnerDeletion":true}]},"spec":{"volumes":[{"name":"kube-api-access-x","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}}],"defaultMode":420}}],"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"memory":"128Mi"},"requests":{"memory":"128Mi"}},"volumeMounts":[{"name":"kube-api-access-x","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":"kwok-node-0","securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-25T06:00:01Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-25T06:00:01Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-25T06:00:01Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-25T06:00:00Z"}],"hostIP":"10.0.0.1","podIP":"10.0.0.2","podIPs":[{"ip":"10.0.0.2"}],"startTime":"2026-11-25T06:00:00Z","containerStatuses":[{"name":"web","state":{"running":{"startedAt":"2026-11-25T06:00:01Z"}},"lastState":{},"ready":true,"restartCount":0,"image":"nginx:1.27","imageID":"","started":true}],"qosClass":"Burstable"}}`

// BenchmarkOf is health's cost per Pod delta.
func BenchmarkOf(b *testing.B) {
	o := judgeableT(b, benchPod)
	j := NewJudge()
	b.SetBytes(int64(len(o.JSON)))
	b.ReportAllocs()
	for b.Loop() {
		if h := j.Of(o); h.Status != Current {
			b.Fatal(h)
		}
	}
}
