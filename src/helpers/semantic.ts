import type { CallOptions, CallResult, Callback } from '../types';
import { analyticsError } from '../message/errors';
import { helperName } from './ecommerce';
import type { CallSite, HelperDeps } from '../api/types';

/** Any property a caller adds next to the spec's fields; declared fields keep their types. */
export interface OpenProperties {
  [key: string]: unknown;
}

/** A device of `Device Created or Updated` and `Device Deleted`. */
export interface Device {
  token: string;
  /** For example `ios` or `android`. */
  type: string;
}

/** Properties of `Device Created or Updated`. */
export interface DeviceCreatedOrUpdatedProperties extends OpenProperties {
  device: Device;
}

/** Properties of `Device Deleted`. */
export interface DeviceDeletedProperties extends OpenProperties {
  device?: Device;
}

/** Properties of `Report Delivery Event`. */
export interface ReportDeliveryEventProperties extends OpenProperties {
  /** Traces back to the person and the campaign or broadcast. */
  deliveryId: string;
  // `string & {}` keeps the known metrics as editor suggestions while accepting any string.
  metric: 'delivered' | 'opened' | 'clicked' | (string & {});
  recipient?: string;
  actionValue?: string;
  href?: string;
}

/** Properties of `Experiment Viewed` (all recommended, none required). */
export interface ExperimentViewedProperties extends OpenProperties {
  experiment_id?: string;
  experiment_name?: string;
  variation_id?: string;
  variation_name?: string;
}

/** Properties of `Relationship Deleted` and `Object Deleted`. */
export interface ObjectDeletedProperties extends OpenProperties {
  objectId: string;
  /** A string holding an integer. @default absent (the service assumes "1") */
  objectTypeId?: string;
}
/** Properties of `Relationship Deleted`. */
export type RelationshipDeletedProperties = ObjectDeletedProperties;

/** A semantic helper whose properties are optional. */
export type SemanticHelper<T> = (properties?: T, options?: CallOptions, callback?: Callback) => Promise<CallResult>;
/** A semantic helper whose properties have required fields. */
export type RequiredSemanticHelper<T> = (properties: T, options?: CallOptions, callback?: Callback) => Promise<CallResult>;

/**
 * The semantic events of spec 000 section 2.6 a browser sends, named by camel-casing the event name.
 * A call missing a required field, or an identified user where one is required, is refused with `invalid_arguments`.
 */
export interface SemanticHelpers {
  /** `User Deleted`; needs an identified user. */
  userDeleted: SemanticHelper<OpenProperties>;
  /** `Device Created or Updated`; needs an identified user. */
  deviceCreatedOrUpdated: RequiredSemanticHelper<DeviceCreatedOrUpdatedProperties>;
  /** `Device Deleted`; needs an identified user. */
  deviceDeleted: SemanticHelper<DeviceDeletedProperties>;
  /** `Relationship Deleted`; needs an identified user. */
  relationshipDeleted: RequiredSemanticHelper<RelationshipDeletedProperties>;
  /** `Object Deleted` */
  objectDeleted: RequiredSemanticHelper<ObjectDeletedProperties>;
  /** `User Suppressed`; needs an identified user. */
  userSuppressed: SemanticHelper<OpenProperties>;
  /** `User Unsuppressed`; needs an identified user. */
  userUnsuppressed: SemanticHelper<OpenProperties>;
  /** `Report Delivery Event` */
  reportDeliveryEvent: RequiredSemanticHelper<ReportDeliveryEventProperties>;
  /** `Experiment Viewed` */
  experimentViewed: SemanticHelper<ExperimentViewedProperties>;
}

// Required fields per event (spec 000 section 2.6): `userId` is the message's user, anything
// else a path in `properties`; every required field is a non-empty string.
const TABLE = `User Deleted|userId
Device Created or Updated|userId device.token device.type
Device Deleted|userId
Relationship Deleted|userId objectId
Object Deleted|objectId
User Suppressed|userId
User Unsuppressed|userId
Report Delivery Event|deliveryId metric
Experiment Viewed|`.split('\n');

/** The semantic event names of spec 000 section 2.6. */
export const SEMANTIC_EVENTS: string[] = /*#__PURE__*/ TABLE.map((row) => row.split('|')[0]);

/**
 * Creates the semantic helpers over the core's `track`; a call missing a field is refused through the call's own path,
 * checked when it runs (after `load`: an identify made before it counts, as it does for `track`).
 */
export function createSemantic(deps: Pick<HelperDeps, '_track' | '_userId'>): SemanticHelpers {
  const helpers: Partial<SemanticHelpers> & Record<string, SemanticHelper<object>> = {};
  TABLE.forEach((row) => {
    const [event, required] = row.split('|');
    helpers[helperName(event)] = (properties, options, callback, site?: CallSite) =>
      deps._track(event, properties, options, callback, site, () => {
        const missing = required.split(' ').find((field) => {
          const value =
            field == 'userId' ? deps._userId() : field.split('.').reduce((o: any, key) => o && o[key], properties);
          return field && !(value && typeof value == 'string');
        });
        return missing === undefined
          ? undefined
          : analyticsError('invalid_arguments', `${event}: ${missing == 'userId' ? 'userId is required (identify the user first)' : `properties.${missing} is required (string)`}`);
      });
  });
  return helpers as SemanticHelpers;
}
