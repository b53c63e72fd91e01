import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkPrincipals, denyWrite, planFence } from '../../../../src/check/commands/fence-plan.js'
import type { TopicAclBinding } from '../../../../src/kafka/fence-admin.js'

const allow = (resourceName: string, principal: string, operation = 'WRITE', patternType: 'LITERAL' | 'PREFIXED' = 'LITERAL'): TopicAclBinding =>
  ({ resourceName, patternType, principal, host: '*', operation, permission: 'ALLOW' })

test('the fence denies every principal with an ALLOW WRITE or ALL on the topic (literal, prefixed) and the named ones, never the allowed ones', () => {
  const acls = new Map([
    ['orders', [
      allow('orders', 'User:app'), allow('ord', 'User:batch', 'ALL', 'PREFIXED'), allow('orders', 'User:mirror'), allow('orders', 'User:reader', 'READ'),
    ]],
  ])
  const plan = planFence(['orders'], acls, ['User:mirror'], ['User:legacy'])
  assert.deepEqual(plan.acls.map(a => a.binding), [denyWrite('orders', 'User:app'), denyWrite('orders', 'User:batch'), denyWrite('orders', 'User:legacy')])
  assert.ok(plan.acls.every(a => !a.exists))
  assert.deepEqual(plan.wildcardAllows, [])
  assert.deepEqual(plan.unfenced, [])
})

test('a DENY that is already there is kept as it is (neither created nor removed by a rollback); a wildcard ALLOW is reported, not denied', () => {
  const acls = new Map([['orders', [allow('orders', 'User:app'), denyWrite('orders', 'User:app'), allow('*', 'User:*')]], ['audit', []]])
  const plan = planFence(['orders', 'audit'], acls, ['User:mirror'], [])
  assert.deepEqual(plan.acls, [{ binding: denyWrite('orders', 'User:app'), exists: true }])
  assert.deepEqual(plan.wildcardAllows, [allow('*', 'User:*')])
  assert.deepEqual(plan.unfenced, ['audit'])
})

test('principal flags that cannot make a fence are refused in one line: User:* denied, a principal both allowed and denied, no allowed principal', () => {
  assert.throws(() => checkPrincipals(['User:mirror'], ['User:*']), /^UsageError: --deny-principal "User:\*": a DENY for every principal denies the mirror too/)
  assert.throws(() => checkPrincipals(['User:mirror'], ['User:mirror']), /--deny-principal "User:mirror": also given with --allow-principal/)
  assert.throws(() => checkPrincipals([], []), /--allow-principal: missing/)
  assert.throws(() => checkPrincipals(['mirror'], []), /--allow-principal "mirror": expected a principal such as User:mirror/)
  assert.doesNotThrow(() => checkPrincipals(['User:mirror'], ['User:app']))
})
