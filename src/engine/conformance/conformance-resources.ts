/**
 * The resources both conformance adapters use: `widgets.example.com` subjects (parents or
 * targets) and ConfigMaps as their children or attachments.
 *
 * @module
 */
import { fakeResourceInfo } from '../../in-memory/fake-resources.js'

/** The controller name both adapters give their kind. */
export const CONFORMANCE_NAME = 'conformance'

/** The subjects: namespaced `widgets.example.com/v1`, with a status subresource. */
export const WIDGETS = fakeResourceInfo({
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
  namespaced: true,
  subresources: ['status'],
})

/** The children or attachments: core ConfigMaps. */
export const CONFIGMAPS = fakeResourceInfo({
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
})
