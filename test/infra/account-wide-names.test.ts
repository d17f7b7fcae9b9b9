/**
 * What an account holds once, not once per region: no two stacks of any stage, in any region they
 * may be deployed to, give a resource the same name where AWS holds that name once. The stages may
 * share one account, so all of them are checked as one account: every listed stage, the default
 * stage and a developer's (which get defaultSettings), a stage in one region in every region a
 * stage in several runs in (its region is the deployer's, unknown at synth: the same stage may be
 * deployed to two regions of one account), and every region's stack of a stage in several. Where each type's name is held, and AWS's page for it: test/infra/name-scopes.ts.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE, isMultiRegion, stages, stageSettings } from '../../infra/stages';
import { FIXTURE_PREFIX } from '../support/fixture-names';
import { nameRuleOf, type HeldName } from './name-scopes';
import { stageStacksOf, synthStageStacks, TEST_ACCOUNT, type SynthesizedStage } from './synth';

interface CfnResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
}

/** A developer's stage: listed nowhere, so it gets defaultSettings as `cdk deploy -c stage=<name>` gives it. */
const DEVELOPER_STAGE = `${FIXTURE_PREFIX}-dev`;
const stageNames = [...new Set([...Object.keys(stages), DEFAULT_STAGE, DEVELOPER_STAGE])];
const multiRegion = stageNames.filter((stage) => isMultiRegion(stageSettings(stage)));
/**
 * Where a stage in one region is deployed here: in every region a stage in several runs in, so that
 * its regional names meet theirs, and its own account-wide names meet in two regions or more.
 */
const deployerRegions = [...new Set(multiRegion.flatMap((stage) => stageSettings(stage).regions ?? []))];

/** Every stack of every stage, each as `<stage> in <region>`. */
const deployments: Array<[string, SynthesizedStage]> = stageNames.flatMap((stage) =>
  (isMultiRegion(stageSettings(stage))
    ? stageStacksOf(stage)
    : deployerRegions.flatMap((region) => synthStageStacks(stage, {}, region))
  ).map((synthesized): [string, SynthesizedStage] => [`${stage} in ${synthesized.stack.region}`, synthesized]),
);

/** One resource's hold on a name: where it is (`<stage> in <region>: <logical id>`), and what may tell it apart from another of the name. */
interface Holder {
  readonly where: string;
  readonly distinguishedBy?: string;
}

const PSEUDO_PARAMETERS = (region: string): Readonly<Record<string, string>> => ({
  'AWS::Region': region,
  'AWS::AccountId': TEST_ACCOUNT,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
});

/**
 * A template's values as deployed: a Ref gives the name of a resource whose Ref is its name (when
 * set); anything else CloudFormation or the service makes (an id, an ARN, a made-up name) is this
 * stack's own, unique to it.
 */
const resolverOf = (deployment: string, template: Readonly<Record<string, CfnResource>>, region: string) => {
  const madeHere = (logicalId: string) => `<${logicalId} of ${deployment}>`;
  const resolve = (value: unknown): string => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (Array.isArray(value)) return value.map(resolve).join(',');
    const entries = Object.entries((value ?? {}) as Record<string, unknown>);
    const [[key, argument] = ['', undefined]] = entries;
    if (entries.length === 1 && key === 'Ref') {
      const id = String(argument);
      const pseudo = PSEUDO_PARAMETERS(region)[id];
      if (pseudo !== undefined) return pseudo;
      const resource = template[id];
      const rule = resource && nameRuleOf(resource.Type);
      const name = rule && rule.scope !== 'unnamed' && rule.refIsName ? nameIn(resource.Properties ?? {}, rule) : undefined;
      return name === undefined ? madeHere(id) : resolve(name);
    }
    if (entries.length === 1 && key === 'Fn::GetAtt')
      return `${madeHere(String((argument as unknown[])[0]))}.${String((argument as unknown[])[1])}`;
    if (entries.length === 1 && key === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map(resolve).join(separator);
    }
    throw new Error(`${deployment}: ${JSON.stringify(value)} in a name is not resolved here: add it`);
  };
  return resolve;
};

/** The value at a rule's `name`, a dotted path for a name inside a property (`SamplingRule.RuleName`). */
const nameIn = (properties: Record<string, unknown>, { name }: HeldName): unknown =>
  name.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], properties);

/** Every name each deployment holds, by the place AWS holds it once; and the resource types no rule classifies. */
const collect = () => {
  const held = new Map<string, Holder[]>();
  const unclassified = new Set<string>();
  for (const [deployment, { template, stack }] of deployments) {
    const resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
    const resolve = resolverOf(deployment, resources, stack.region);
    for (const [logicalId, { Type, Properties = {} }] of Object.entries(resources)) {
      const rule = nameRuleOf(Type);
      if (!rule) {
        unclassified.add(`${Type} (${deployment}: ${logicalId})`);
        continue;
      }
      if (rule.scope === 'unnamed' || nameIn(Properties, rule) === undefined) continue;
      const named: HeldName = rule;
      const name = (named.normalize ?? ((text: string) => text))(resolve(nameIn(Properties, named)));
      const scope = typeof named.scope === 'function' ? named.scope(Properties) : named.scope;
      const places = scope === 'account' ? ['the account'] : (named.heldIn?.(Properties, stack.region) ?? [stack.region]);
      const within = (named.within ?? []).map((property) => (Properties[property] === undefined ? '' : resolve(Properties[property])));
      const distinguishedBy = named.distinguishedBy && Properties[named.distinguishedBy];
      for (const place of places) {
        const key = [named.namespace ?? Type, place, ...within, name].join(' | ');
        const holders = held.get(key) ?? [];
        holders.push({ where: `${deployment}: ${logicalId}`, distinguishedBy: distinguishedBy ? resolve(distinguishedBy) : undefined });
        held.set(key, holders);
      }
    }
  }
  return { held, unclassified: [...unclassified] };
};

/** Holders of one name clash unless each tells itself apart from the others (a record's own SetIdentifier). */
const clashes = (held: ReadonlyMap<string, readonly Holder[]>): string[] =>
  [...held].flatMap(([key, holders]) => {
    if (holders.length < 2) return [];
    const apart = holders.every(({ distinguishedBy }) => distinguishedBy !== undefined);
    const identifiers = holders.map(({ distinguishedBy }) => distinguishedBy);
    if (apart && new Set(identifiers).size === identifiers.length) return [];
    return [`${key}: held by ${holders.map(({ where }) => where).join('; ')}`];
  });

describe('names an account holds once', () => {
  const { held, unclassified } = collect();

  it('synthesizes every stage, listed or not, in each region it may be deployed to', () => {
    expect(stages).not.toHaveProperty(DEVELOPER_STAGE);
    expect(multiRegion.length).toBeGreaterThan(0);
    for (const stage of stageNames) {
      const regions = deployments.filter(([name]) => name.startsWith(`${stage} in `)).map(([, { stack }]) => stack.region);
      expect(regions, stage).toEqual(isMultiRegion(stageSettings(stage)) ? stageSettings(stage).regions : deployerRegions);
    }
    expect(deployerRegions.length).toBeGreaterThan(1);
  });

  it('knows where AWS holds the name of every resource type the stacks make, from its page', () => {
    expect(unclassified).toEqual([]);
  });

  it('finds the names held once in the account: the dashboards and the Route 53 records', () => {
    const accountWide = [...held.keys()].filter((key) => key.split(' | ')[1] === 'the account');
    for (const type of ['AWS::CloudWatch::Dashboard', 'AWS::Route53::RecordSet'])
      expect(
        accountWide.some((key) => key.startsWith(`${type} |`)),
        type,
      ).toBe(true);
  });

  it('gives no two resources, of any stage in any region, one name where AWS holds it once', () => {
    expect(clashes(held)).toEqual([]);
  });
});

describe('the clash check', () => {
  const holder = (where: string, distinguishedBy?: string): Holder => ({ where, distinguishedBy });

  it('fails two holders of one name, and a record of a name and type with no set identifier beside one with', () => {
    expect(clashes(new Map([['dashboard', [holder('a'), holder('b')]]]))).toHaveLength(1);
    expect(clashes(new Map([['record', [holder('a', 'us-east-1'), holder('b')]]]))).toHaveLength(1);
    expect(clashes(new Map([['record', [holder('a', 'us-east-1'), holder('b', 'us-east-1')]]]))).toHaveLength(1);
  });

  it('passes one holder, and records of one name told apart by their own set identifiers', () => {
    expect(clashes(new Map([['dashboard', [holder('a')]]]))).toEqual([]);
    expect(clashes(new Map([['record', [holder('a', 'us-east-1'), holder('b', 'us-east-2')]]]))).toEqual([]);
  });
});
