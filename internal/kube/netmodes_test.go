package kube

import (
	"encoding/json"
	"strings"
	"testing"
)

// The objects cnperf builds for k8s-netperf's modes are k8s-netperf's (cloud-bulldozer/k8s-netperf
// fb9a2ec, pkg/k8s/kubernetes.go: DeployL2Udn, DeployL3Udn, DeployCUDN, DeployLocalnetCUDN,
// DeploySriovPolicy with deviceType netdevice, DeploySriovNetwork), field for field, but for
// cnperf's labels, the run's namespace and the CUDN's namespace selector (Objects says why).
// The e2e test TestK8sNetperfNetworkObjectsAgainstCRDs (test/e2e/netmodes_test.go) submits them to the projects' real CRDs.
func TestNetworkModeObjects(t *testing.T) {
	const labels = `"labels":{"app.kubernetes.io/managed-by":"cnperf","app.kubernetes.io/name":"cnperf","cnperf.dev/run":"r1"}`
	const selector = `"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"perf"}}`
	for _, tc := range []struct {
		mode NetworkMode
		want []string // path, then the body as JSON (keys sorted), for each object
	}{
		{NetworkMode{Flag: "--udnl2", Kind: ModeUDN, Topology: "Layer2"}, []string{
			"/apis/k8s.ovn.org/v1/namespaces/perf/userdefinednetworks",
			`{"apiVersion":"k8s.ovn.org/v1","kind":"UserDefinedNetwork","metadata":{` + labels + `,"name":"udn-primary-netperf","namespace":"perf"},` +
				`"spec":{"layer2":{"ipam":{"lifecycle":"Persistent"},"role":"Primary","subnets":["10.0.0.0/24"]},"topology":"Layer2"}}`}},
		{NetworkMode{Flag: "--udnl3", Kind: ModeUDN, Topology: "Layer3"}, []string{
			"/apis/k8s.ovn.org/v1/namespaces/perf/userdefinednetworks",
			`{"apiVersion":"k8s.ovn.org/v1","kind":"UserDefinedNetwork","metadata":{` + labels + `,"name":"udn-primary-netperf","namespace":"perf"},` +
				`"spec":{"layer3":{"role":"Primary","subnets":[{"cidr":"10.0.0.0/16"}]},"topology":"Layer3"}}`}},
		{NetworkMode{Flag: "--cudn layer2", Kind: ModeCUDN, Topology: "Layer2"}, []string{
			"/apis/k8s.ovn.org/v1/clusteruserdefinednetworks",
			`{"apiVersion":"k8s.ovn.org/v1","kind":"ClusterUserDefinedNetwork","metadata":{` + labels + `,"name":"cudn-secondary-netperf"},` +
				`"spec":{` + selector + `,"network":{"layer2":{"ipam":{"lifecycle":"Persistent"},"role":"Secondary","subnets":["20.0.0.0/16"]},"topology":"Layer2"}}}`}},
		{NetworkMode{Flag: "--cudn layer3", Kind: ModeCUDN, Topology: "Layer3"}, []string{
			"/apis/k8s.ovn.org/v1/clusteruserdefinednetworks",
			`{"apiVersion":"k8s.ovn.org/v1","kind":"ClusterUserDefinedNetwork","metadata":{` + labels + `,"name":"cudn-secondary-netperf"},` +
				`"spec":{` + selector + `,"network":{"layer3":{"role":"Secondary","subnets":[{"cidr":"20.0.0.0/16"}]},"topology":"Layer3"}}}`}},
		{NetworkMode{Flag: "--localnet physnet", Kind: ModeLocalnet, PhysicalNetwork: "physnet"}, []string{
			"/apis/k8s.ovn.org/v1/clusteruserdefinednetworks",
			`{"apiVersion":"k8s.ovn.org/v1","kind":"ClusterUserDefinedNetwork","metadata":{` + labels + `,"name":"cudn-localnet-netperf"},` +
				`"spec":{` + selector + `,"network":{"localnet":{"ipam":{"mode":"Disabled"},"physicalNetworkName":"physnet","role":"Secondary"},"topology":"Localnet"}}}`}},
		{NetworkMode{Flag: "--sriov ens1f0", Kind: ModeSRIOV, PF: "ens1f0"}, []string{
			"/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworknodepolicies",
			`{"apiVersion":"sriovnetwork.openshift.io/v1","kind":"SriovNetworkNodePolicy","metadata":{` + labels +
				`,"name":"sriov-netperf-policy","namespace":"openshift-sriov-network-operator"},"spec":{"deviceType":"netdevice",` +
				`"nicSelector":{"pfNames":["ens1f0"]},"nodeSelector":{"node-role.kubernetes.io/worker":""},"numVfs":2,"resourceName":"ens1f0"}}`,
			"/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworks",
			`{"apiVersion":"sriovnetwork.openshift.io/v1","kind":"SriovNetwork","metadata":{` + labels +
				`,"name":"sriov-netperf","namespace":"openshift-sriov-network-operator"},"spec":{"ipam":"{\"type\": \"whereabouts\", ` +
				`\"range\": \"192.168.100.0/24\"}","networkNamespace":"perf","resourceName":"ens1f0"}}`}},
		{NetworkMode{Flag: "--sriov ens1f0", Kind: ModeSRIOV, PF: "ens1f0", NodeRole: "sriov"}, []string{
			"/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworknodepolicies",
			`{"apiVersion":"sriovnetwork.openshift.io/v1","kind":"SriovNetworkNodePolicy","metadata":{` + labels +
				`,"name":"sriov-netperf-policy","namespace":"openshift-sriov-network-operator"},"spec":{"deviceType":"netdevice",` +
				`"nicSelector":{"pfNames":["ens1f0"]},"nodeSelector":{"node-role.kubernetes.io/sriov":""},"numVfs":2,"resourceName":"ens1f0"}}`,
			"/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworks",
			`{"apiVersion":"sriovnetwork.openshift.io/v1","kind":"SriovNetwork","metadata":{` + labels +
				`,"name":"sriov-netperf","namespace":"openshift-sriov-network-operator"},"spec":{"ipam":"{\"type\": \"whereabouts\", ` +
				`\"range\": \"192.168.100.0/24\"}","networkNamespace":"perf","resourceName":"ens1f0"}}`}},
	} {
		t.Run(tc.mode.Flag+" "+tc.mode.NodeRole, func(t *testing.T) {
			objs, err := tc.mode.Objects("perf", "r1")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				b, err := json.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, o.Path(), string(b))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	for _, bad := range []NetworkMode{
		{Flag: "--udnl2", Kind: ModeUDN, Topology: "layer2"},
		{Flag: "--cudn x", Kind: ModeCUDN},
		{Flag: "--localnet", Kind: ModeLocalnet},
		{Flag: "--sriov", Kind: ModeSRIOV},
		{Flag: "--x", Kind: "x"},
	} {
		if _, err := bad.Objects("perf", "r1"); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
