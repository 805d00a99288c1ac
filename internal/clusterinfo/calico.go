package clusterinfo

import (
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// PoolEncapsulation names a Calico IPPool's encapsulation from its vxlanMode and ipipMode as
// the Installation does: VXLAN, VXLANCrossSubnet, IPIP, IPIPCrossSubnet or None.
func PoolEncapsulation(vxlanMode, ipipMode string) string {
	switch {
	case vxlanMode != "" && vxlanMode != "Never":
		return "VXLAN" + strings.TrimPrefix(vxlanMode, "Always")
	case ipipMode != "" && ipipMode != "Never":
		return "IPIP" + strings.TrimPrefix(ipipMode, "Always")
	}
	return "None"
}

// FelixWireGuard is what a FelixConfiguration's spec says of WireGuard (nil: not set).
type FelixWireGuard struct {
	WireguardEnabled               *bool `json:"wireguardEnabled"`
	WireguardEnabledV6             *bool `json:"wireguardEnabledV6"`
	WireguardHostEncryptionEnabled *bool `json:"wireguardHostEncryptionEnabled"`
}

// Set sets d's WireGuard fields that the spec sets.
func (w FelixWireGuard) Set(d *api.CalicoDetails) {
	if w.WireguardEnabled != nil {
		d.WireguardEnabled = *w.WireguardEnabled
	}
	if w.WireguardEnabledV6 != nil {
		d.WireguardEnabledV6 = *w.WireguardEnabledV6
	}
	if w.WireguardHostEncryptionEnabled != nil {
		d.WireguardHostEncryptionEnabled = *w.WireguardHostEncryptionEnabled
	}
}
