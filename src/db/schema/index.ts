export * from "./audit";
export * from "./devices";
export * from "./events";
export * from "./gdpr";
export * from "./identity";
export * from "./pki";
export * from "./policies";
export * from "./sso";
