import type { AwsMskIamSettings, GssapiSettings, OAuthBearerCredentials } from '../config/cluster-connection.js'
import { silentLogger, type Logger } from '../shared/logger.js'
import { AwsCredentialsSource } from './aws-credentials-source.js'
import { GssapiCredentials, loadKerberosLibrary } from './kerberos-library.js'
import { OAuthTokenSource } from './oauth-token-source.js'

/*
 * The credentials behind a cluster connection's SASL settings, one holder per settings object, shared by every
 * client made from them: the kafkajs clients (consumer, producer, admin) and the wire layer's broker connections.
 * So a cluster fetches one OAuth token at a time, one set of AWS credentials, and keeps one Kerberos ticket cache.
 */

/** A function that gives the one holder of `settings`, made by `make` the first time it is asked for. */
function onePerSettings<S extends object, H> (make: (settings: S, logger: Logger) => H): (settings: S, logger?: Logger) => H {
  const holders = new WeakMap<S, H>()
  return (settings, logger = silentLogger) => {
    let holder = holders.get(settings)
    if (holder === undefined) {
      holder = make(settings, logger)
      holders.set(settings, holder)
    }
    return holder
  }
}

/** The token source of an OAUTHBEARER connection: one token at a time for all its clients, not one each. */
export const oauthTokenSource = onePerSettings((sasl: OAuthBearerCredentials, logger) => new OAuthTokenSource(sasl, logger))

/** The AWS credentials source of an AWS_MSK_IAM connection. */
export const awsCredentialsSource = onePerSettings((sasl: AwsMskIamSettings, logger) => new AwsCredentialsSource(sasl, logger))

/** The GSSAPI credentials of a connection (one memory ticket cache); throws the one-line install hint when the optional `kerberos` package is missing. */
export const gssapiCredentials = onePerSettings((sasl: GssapiSettings) => new GssapiCredentials(sasl, loadKerberosLibrary(sasl)))
