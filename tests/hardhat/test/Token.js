const { loadFixture } = require("@nomicfoundation/hardhat-toolbox/network-helpers");
const { expect } = require("chai");
const { ethers } = require("hardhat");

describe("Token", function () {
  async function deployToken() {
    const [owner, other] = await ethers.getSigners();
    const token = await ethers.deployContract("Token", [1000n]);
    return { token, owner, other };
  }

  it("gives the whole supply to the deployer", async function () {
    const { token, owner } = await loadFixture(deployToken);
    expect(await token.totalSupply()).to.equal(1000n);
    expect(await token.balanceOf(owner.address)).to.equal(1000n);
  });

  it("emits Transfer", async function () {
    const { token, owner, other } = await loadFixture(deployToken);
    await expect(token.transfer(other.address, 10n)).to.emit(token, "Transfer").withArgs(owner.address, other.address, 10n);
  });

  it("moves both balances", async function () {
    const { token, owner, other } = await loadFixture(deployToken);
    await expect(token.transfer(other.address, 25n)).to.changeTokenBalances(token, [owner, other], [-25n, 25n]);
  });

  it("starts every test from the fixture", async function () {
    const { token, owner, other } = await loadFixture(deployToken);
    expect(await token.balanceOf(owner.address)).to.equal(1000n);
    expect(await token.balanceOf(other.address)).to.equal(0n);
  });

  it("refuses a transfer over the balance with OpenZeppelin's custom error", async function () {
    const { token, owner, other } = await loadFixture(deployToken);
    await expect(token.connect(other).transfer(owner.address, 1n))
      .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
      .withArgs(other.address, 0n, 1n);
  });
});
