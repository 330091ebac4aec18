package platform

import (
	"errors"

	"golang.org/x/sys/windows/registry"
)

// osLoginItem is Deskhand's value in the per-user Run key.
func osLoginItem() (loginItem, error) {
	return runKey{values: registryValues{path: runKeyPath}, name: runValueName}, nil
}

// registryValues is a key under HKEY_CURRENT_USER, opened for each call.
type registryValues struct{ path string }

func (r registryValues) get(name string) (string, bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, r.path, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer k.Close()
	v, _, err := k.GetStringValue(name)
	if errors.Is(err, registry.ErrNotExist) {
		return "", false, nil
	}
	return v, err == nil, err
}

func (r registryValues) set(name, value string) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, r.path, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringValue(name, value)
}

func (r registryValues) remove(name string) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, r.path, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.DeleteValue(name); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return err
	}
	return nil
}

func haveDisplay() bool { return true }

func trayUsable() bool { return true }
